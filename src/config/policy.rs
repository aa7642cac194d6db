//! The permission policy a run enforces, built by one function for both a run and
//! `cn-run explain` ([`enforced_policy`]): the mode (flags, untrusted mode), the rules of
//! each source in order, and the repository files instructions come from.

use std::path::Path;

use super::{ConfigError, RunConfig, Settings};
use crate::job::Job;
use crate::permissions::{Mode, Permission, Policy, PolicyInput, RuleSpec, parse_permissions_yaml};
use crate::repo_files::RepoFiles;

/// Rules of one source in the order Continue uses: excludes, then asks, then allows.
fn rules(allow: &[String], ask: &[String], exclude: &[String]) -> Vec<RuleSpec> {
    let mut out = Vec::new();
    out.extend(
        exclude
            .iter()
            .map(|p| RuleSpec::new(p.clone(), Permission::Exclude)),
    );
    out.extend(
        ask.iter()
            .map(|p| RuleSpec::new(p.clone(), Permission::Ask)),
    );
    out.extend(
        allow
            .iter()
            .map(|p| RuleSpec::new(p.clone(), Permission::Allow)),
    );
    out
}

/// Command-line policy flags (shared by `run` and `explain`).
pub(crate) struct PolicyFlags<'a> {
    pub allow: &'a [String],
    pub ask: &'a [String],
    pub exclude: &'a [String],
    pub auto: bool,
    pub readonly: bool,
}

impl<'a> From<&'a Settings> for PolicyFlags<'a> {
    fn from(a: &'a Settings) -> Self {
        PolicyFlags {
            allow: &a.policy.allow,
            ask: &a.policy.ask,
            exclude: &a.policy.exclude,
            auto: a.policy.auto,
            readonly: a.policy.readonly,
        }
    }
}

/// A `--allow`/`--ask`/`--exclude` pattern naming a tool that does not exist is a usage
/// error: the rule would match nothing, silently.
pub(super) fn check_flag_tools(flags: &PolicyFlags<'_>) -> Result<(), ConfigError> {
    let lists = [
        ("--allow", flags.allow),
        ("--ask", flags.ask),
        ("--exclude", flags.exclude),
    ];
    for (flag, list) in lists {
        if let Some(m) = list.iter().find_map(|p| crate::job::unknown_rule_tool(p)) {
            return Err(ConfigError::Flag(format!("{flag}: {m}")));
        }
    }
    Ok(())
}

/// The run's policy. In untrusted mode auto mode is off (headless instead): network access
/// and everything else that needs permission must be allowed by a rule that names it.
fn build_policy(
    job: &Job,
    flags: &PolicyFlags<'_>,
    workspace: &Path,
    repo_files: &RepoFiles,
    untrusted: bool,
) -> Result<Policy, ConfigError> {
    check_flag_tools(flags)?;
    let mut mode = if flags.auto {
        Mode::Auto
    } else if flags.readonly {
        Mode::Plan
    } else {
        job.permissions.mode
    };
    if untrusted && mode == Mode::Auto {
        mode = Mode::Headless;
    }
    let (repo, repo_file) = repo_rules(job, repo_files)?;
    let p = &job.permissions;
    let input = PolicyInput {
        mode,
        cli: rules(flags.allow, flags.ask, flags.exclude),
        job: rules(&p.allow, &p.ask, &p.exclude),
        repo,
        repo_file,
    };
    Policy::build(input, workspace).map_err(|e| ConfigError::Policy(e.to_string()))
}

/// The repo's permissions.yaml: the one the job names, else `.continue/permissions.yaml`.
fn repo_rules(
    job: &Job,
    repo_files: &RepoFiles,
) -> Result<(Vec<RuleSpec>, Option<String>), ConfigError> {
    let (rel, required) = match &job.permissions.file {
        Some(f) => (f.as_str(), true),
        None => (".continue/permissions.yaml", false),
    };
    let shown = repo_files.describe(rel);
    match repo_files.read(rel) {
        Some(text) => {
            let rules = parse_permissions_yaml(&text)
                .map_err(|e| ConfigError::Policy(format!("{shown}: {e}")))?;
            Ok((rules, Some(shown)))
        }
        None if !required || matches!(repo_files, RepoFiles::Nothing) => Ok((Vec::new(), None)),
        None => Err(ConfigError::Policy(format!(
            "permissions file {shown} not found"
        ))),
    }
}

/// The policy a run enforces, the repository files it reads instructions from, and a note
/// about them: the one function behind both a run and `cn-run explain`, so what `explain`
/// shows is what the run does (untrusted mode included).
fn enforced_policy(
    job: &Job,
    flags: &PolicyFlags<'_>,
    workspace: &Path,
    base_ref: Option<&str>,
    untrusted: bool,
) -> Result<(Policy, RepoFiles, Option<String>), ConfigError> {
    let (repo_files, note) = repo_files(base_ref, workspace, untrusted)?;
    let policy = build_policy(job, flags, workspace, &repo_files, untrusted)?;
    Ok((policy, repo_files, note))
}

/// Where repository instructions come from: the workspace, or in untrusted mode the
/// trusted base commit (resolved in `RunConfig::resolve`); with no base commit, none are used (the second value says so).
fn repo_files(
    base_ref: Option<&str>,
    workspace: &Path,
    untrusted: bool,
) -> Result<(RepoFiles, Option<String>), ConfigError> {
    if !untrusted {
        return Ok((RepoFiles::Workdir(workspace.to_path_buf()), None));
    }
    match base_ref {
        Some(r) => Ok((
            RepoFiles::at_ref(workspace, r)?,
            None,
        )),
        None => Ok((
            RepoFiles::Nothing,
            Some("untrusted mode without a base ref: repository instructions (AGENTS.md, .continue/rules, .continue/permissions.yaml) are not used".to_owned()),
        )),
    }
}

impl RunConfig {
    /// The policy this run enforces in `workspace` (its own, a copy or a worktree), with
    /// the repository files instructions come from and a note about them.
    pub(crate) fn enforced_policy(
        &self,
        workspace: &Path,
    ) -> Result<(Policy, RepoFiles, Option<String>), ConfigError> {
        enforced_policy(
            &self.job,
            &self.policy_flags(),
            workspace,
            self.base_ref.as_deref(),
            self.trust.untrusted,
        )
    }

    /// As [`Self::enforced_policy`], with the repository files given (a resume's: those
    /// the first run read, kept in its folder).
    pub(crate) fn enforced_policy_with(
        &self,
        workspace: &Path,
        repo_files: RepoFiles,
    ) -> Result<(Policy, RepoFiles, Option<String>), ConfigError> {
        let flags = self.policy_flags();
        let policy = build_policy(
            &self.job,
            &flags,
            workspace,
            &repo_files,
            self.trust.untrusted,
        )?;
        Ok((policy, repo_files, None))
    }

    /// Warnings about how the flags were read (untrusted mode turns auto mode off).
    pub(crate) fn policy_warnings(&self) -> Vec<String> {
        let auto = self.policy_flags().auto || self.job.permissions.mode == Mode::Auto;
        (self.trust.untrusted && auto)
            .then(|| {
                "auto mode is off in untrusted mode: calls that need permission need a rule \
                 that names them"
                    .to_owned()
            })
            .into_iter()
            .collect()
    }
}
