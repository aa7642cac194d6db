//! The assembled policy: every rule in evaluation order, compiled once, plus the entry points the
//! agent loop and `cn-run explain` use.
//!
//! Order: the mode's own rules, then the command line, the job file and the repo's
//! `permissions.yaml` (each sorted exclude → ask → allow, so within one source the strictest rule
//! is seen first, as in Continue), then the mode's default table. The first matching rule gives
//! the static verdict; `decide` then applies the evaluator and the tool's own tightening.

use serde_json::Value;

use super::decide::{Call, decide};
use super::defaults::{default_table, mode_rules};
use super::explain::origin;
use super::paths::Workspace;
use super::pattern::CompiledPattern;
use super::types::{
    Check, Decision, Mode, Permission, PolicyError, PolicyInput, Rule, RuleView, Source, Tighten,
};
use crate::command_safety::{Context, read};

/// The effective permission policy of a run.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: Mode,
    pub(crate) rules: Vec<Rule>,
    pub(crate) ws: Workspace,
    repo_file: Option<String>,
    /// Where Bash commands run, for the evaluator.
    context: Context,
}

impl Policy {
    /// Assembles and compiles the policy; a malformed pattern is an error naming it and its
    /// source. `workspace` is the absolute workspace root that path arguments are resolved
    /// against.
    pub fn build(input: PolicyInput, workspace: &std::path::Path) -> Result<Policy, PolicyError> {
        Self::assemble(input, workspace, true)
    }

    /// Like [`Policy::build`] but without the mode's default table, so a call no rule covers
    /// falls through to "no match → ask" (used to replay Continue's bare rule lists).
    pub fn build_without_defaults(
        input: PolicyInput,
        workspace: &std::path::Path,
    ) -> Result<Policy, PolicyError> {
        Self::assemble(input, workspace, false)
    }

    fn assemble(
        input: PolicyInput,
        workspace: &std::path::Path,
        with_defaults: bool,
    ) -> Result<Policy, PolicyError> {
        let ws = Workspace::new(workspace);
        let mode = input.mode;
        let user = [
            (Source::Cli, input.cli),
            (Source::Job, input.job),
            (Source::RepoFile, input.repo),
        ]
        .into_iter()
        .flat_map(|(source, mut list)| {
            list.sort_by_key(|spec| std::cmp::Reverse(spec.permission));
            list.into_iter().map(move |spec| (source, spec))
        });
        let defaults = if with_defaults {
            default_table(mode)
        } else {
            Vec::new()
        };
        let specs = (mode_rules(mode)
            .into_iter()
            .map(|spec| (Source::Mode, spec)))
        .chain(user)
        .chain(defaults.into_iter().map(|spec| (Source::Default, spec)));
        let repo_file = input.repo_file;
        let rules = specs
            .map(|(source, spec)| {
                let pattern = CompiledPattern::compile(&spec.pattern, &ws)
                    .map_err(|err| rule_error(err, &origin(source, mode, repo_file.as_deref())))?;
                let text = spec.pattern.trim().to_owned();
                Ok(Rule {
                    text,
                    permission: spec.permission,
                    source,
                    pattern,
                })
            })
            .collect::<Result<Vec<_>, PolicyError>>()?;
        Ok(Policy {
            mode,
            rules,
            ws,
            repo_file,
            context: Context::CONTAINED,
        })
    }

    /// The policy for commands that run in `context` (built policies assume containment).
    #[must_use]
    pub fn with_context(mut self, context: Context) -> Policy {
        self.context = context;
        self
    }

    /// Where Bash commands are taken to run.
    pub fn context(&self) -> Context {
        self.context
    }

    /// Decides one call. `dynamic` is the tool's own verdict from its arguments, if it has one;
    /// for a tool that runs a command (Bash) the command-safety evaluator runs here as well.
    pub fn check(&self, tool: &str, args: &Value, dynamic: Option<Tighten>) -> Decision {
        let rule = self
            .rules
            .iter()
            .find(|rule| rule.pattern.matches(tool, args, &self.ws));
        let mut checks = Vec::new();
        let reading = crate::catalog::command(tool, args)
            .filter(|c| !c.trim().is_empty())
            .map(|c| read(c, self.context));
        if rule.is_none_or(|rule| rule.permission != Permission::Exclude) {
            if let Some(reading) = &reading {
                checks.extend(Check::from_verdict(reading.verdict.clone()));
            }
            checks.extend(dynamic.and_then(Check::from_tighten));
        }
        let call = Call {
            tool,
            args,
            mode: self.mode,
            ws: &self.ws,
            repo_file: self.repo_file.as_deref(),
            rules: &self.rules,
            reading: reading.as_ref(),
        };
        decide(&call, rule, &checks)
    }

    /// Whether the tool is offered to the model: unless every call of it would be excluded.
    /// Rules are read in order: a rule with an argument pattern that allows (or asks for)
    /// the tool means some calls can run (`Bash(cargo *)` offers Bash even when a later rule
    /// excludes Bash), and the first rule without one decides for everything else.
    /// Continue decides with empty arguments only, so argument-scoped allows never offer a
    /// tool there. Tools that merely need permission are offered and get an explained
    /// denial when called.
    pub fn is_offered(&self, tool: &str) -> bool {
        for rule in self.rules.iter().filter(|r| r.names_tool(tool)) {
            match (rule.has_argument(), rule.permission) {
                (true, Permission::Exclude) => continue,
                (true, _) => return true,
                (false, permission) => return permission != Permission::Exclude,
            }
        }
        true
    }

    /// Every rule in evaluation order.
    pub fn table(&self) -> Vec<RuleView> {
        let file = |source: Source| {
            (source == Source::RepoFile)
                .then(|| self.repo_file.clone())
                .flatten()
        };
        self.rules
            .iter()
            .map(|rule| RuleView {
                pattern: rule.text.clone(),
                permission: rule.permission,
                source: rule.source,
                file: file(rule.source),
            })
            .collect()
    }

    /// The run's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

fn rule_error(err: PolicyError, origin: &str) -> PolicyError {
    match err {
        PolicyError::InvalidPattern { pattern, reason } => PolicyError::InvalidRule {
            pattern,
            origin: origin.to_owned(),
            reason,
        },
        other => other,
    }
}
