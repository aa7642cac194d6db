//! Combines the static verdict with the dynamic checks into one explained [`Decision`].
//!
//! Rules of combination: a static exclude stands; any check that excludes wins over every rule;
//! a check that asks turns a static allow into ask unless the allowing rule is the user's own rule
//! naming this call's argument; auto mode finally turns every remaining ask into allow, but
//! for a path inside `.git`, which only a rule naming `.git` allows.

use serde_json::Value;

use super::compound::{self, Uncovered};
use super::explain::{self, argument_hint, origin, suggest_allow_rule};
use super::paths::Workspace;
use super::types::{Check, Decision, Mode, Permission, Rule, Source};
use crate::command_safety::Reading;

/// The call being decided and the policy context it is decided in.
pub(crate) struct Call<'a> {
    pub(crate) tool: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) mode: Mode,
    pub(crate) ws: &'a Workspace,
    pub(crate) repo_file: Option<&'a str>,
    /// Every rule of the policy, in order (for the parts of a compound command).
    pub(crate) rules: &'a [Rule],
    /// The evaluator's reading of a Bash command: its verdict and its parts.
    pub(crate) reading: Option<&'a Reading>,
}

impl<'a> Call<'a> {
    /// The first rule matching `part` of a compound Bash command on its own.
    fn rule_for_part(&self, part: &str) -> Option<&'a Rule> {
        let args = crate::catalog::command_args(self.tool, part);
        self.rules
            .iter()
            .find(|r| r.matches(self.tool, &args, self.ws))
    }

    fn origin(&self, source: Source) -> String {
        origin(source, self.mode, self.repo_file)
    }

    /// The rule that would lift `check`'s objection, if one could.
    fn hint_for(&self, check: &Check) -> Option<String> {
        match check.source {
            Source::Evaluator => Some(suggest_allow_rule(self.tool, self.args)),
            _ => argument_hint(self.tool, self.args, self.ws),
        }
    }
}

pub(crate) fn decide(call: &Call<'_>, rule: Option<&Rule>, checks: &[Check]) -> Decision {
    let base = static_decision(call, rule);
    if base.permission == Permission::Exclude {
        return base;
    }
    if let Some((part, rule)) = excluded_part(call) {
        return Decision {
            permission: Permission::Exclude,
            rule: Some(rule.text.clone()),
            source: rule.source,
            reason: format!(
                "this compound command runs `{part}`, which is excluded by rule `{}` from {}",
                rule.text,
                call.origin(rule.source)
            ),
            allow_hint: None,
        };
    }
    if let Some(check) = checks.iter().find(|c| c.permission == Permission::Exclude) {
        return Decision {
            permission: Permission::Exclude,
            rule: Some(check.rule.clone()),
            source: check.source,
            reason: format!("{}; no rule can allow it", explain::objection(check)),
            allow_hint: None,
        };
    }
    let ask = checks.iter().find(|c| c.permission == Permission::Ask);
    let mut decision = match (ask, rule) {
        (None, _) => base,
        (Some(check), Some(rule))
            if rule.explicitly_allows_argument() && names_enough(rule, check) =>
        {
            match uncovered(call) {
                None => Decision {
                    reason: format!(
                        "{}, which names this call explicitly, although {}",
                        base.reason,
                        explain::objection(check)
                    ),
                    ..base
                },
                Some(part) => {
                    let hint = match &part {
                        Uncovered::Part(p) => Some(suggest_allow_rule(
                            call.tool,
                            &crate::catalog::command_args(call.tool, p),
                        )),
                        Uncovered::Substitution | Uncovered::Unreadable => None,
                    };
                    let origin = call.origin(rule.source);
                    Decision {
                        permission: Permission::Ask,
                        rule: Some(check.rule.clone()),
                        source: check.source,
                        reason: explain::partly_covered(
                            rule,
                            &origin,
                            check,
                            &part,
                            hint.as_deref(),
                        ),
                        allow_hint: hint,
                    }
                }
            }
        }
        (Some(check), Some(rule)) if rule.permission == Permission::Allow => {
            let hint = call.hint_for(check);
            let origin = call.origin(rule.source);
            Decision {
                permission: Permission::Ask,
                rule: Some(check.rule.clone()),
                source: check.source,
                reason: explain::tightened(call.tool, rule, &origin, check, hint.as_deref()),
                allow_hint: hint,
            }
        }
        (Some(check), _) => Decision {
            reason: format!("{}; also, {}", base.reason, explain::objection(check)),
            allow_hint: call.hint_for(check),
            ..base
        },
    };
    // `.git` (hooks, config: programs the workflow's next git command runs) and a write
    // outside the workspace need a rule that names them even in auto mode.
    let named = ask.filter(|c| needs_a_named_rule(&c.rule));
    let git = named.is_some();
    if let Some(check) = named
        && decision.permission == Permission::Ask
    {
        // Named so that `on_ask: allow` can tell it from other asks: it never answers this one.
        decision.rule = Some(check.rule.clone());
    }
    if decision.permission == Permission::Ask && call.mode == Mode::Auto && !git {
        let why = ask.map_or_else(|| decision.reason.clone(), explain::objection);
        return Decision {
            permission: Permission::Allow,
            source: Source::Mode,
            reason: format!(
                "auto mode allows this call, which would otherwise need permission: {why}"
            ),
            allow_hint: None,
            ..decision
        };
    }
    decision
}

/// The tool's rule id for a path inside `.git`: only a rule whose pattern names `.git` lifts it.
pub const GIT_INTERNALS_RULE: &str = "tool.git_internals";

/// The file tools' rule id for a write outside the workspace, where a contained command
/// cannot write: a rule naming the path lifts it, auto mode and `on_ask: allow` do not.
pub const OUTSIDE_WRITE_RULE: &str = "tool.write_outside_workspace";

/// The file tools' rule id for a read of what a contained command cannot see (the host's
/// temporary folders; as root, what root without capabilities cannot read): a rule naming
/// the path lifts it, auto mode and `on_ask: allow` do not.
pub const UNSEEN_RULE: &str = "tool.unseen_by_commands";

/// Fetch's rule id for a local address (loopback, private, link-local, the machine's own):
/// a contained command reaches none of them by default, so a rule naming the URL lifts it,
/// auto mode and `on_ask: allow` do not (else `--auto` fetches the metadata service).
pub const PRIVATE_ADDRESS_RULE: &str = "tool.private_address";

/// Whether an ask of `rule` is answered only by a rule that names the call (never by auto
/// mode, `on_ask: allow` or a deferral).
pub fn needs_a_named_rule(rule: &str) -> bool {
    [
        GIT_INTERNALS_RULE,
        OUTSIDE_WRITE_RULE,
        UNSEEN_RULE,
        PRIVATE_ADDRESS_RULE,
    ]
    .contains(&rule)
}

/// Whether `rule` names the call specifically enough to lift `check`: `Edit(**)` does not name
/// `.git/config`; `Edit(.git/**)` does.
fn names_enough(rule: &Rule, check: &Check) -> bool {
    check.rule != GIT_INTERNALS_RULE || rule.text.contains(".git")
}

/// A Bash command's parts are decided one by one too: the first risky part that the rule
/// deciding it (first match, as for whole calls) does not explicitly allow.
fn uncovered(call: &Call<'_>) -> Option<Uncovered> {
    compound::first_uncovered(call.reading?, |part| {
        call.rule_for_part(part)
            .is_some_and(Rule::explicitly_allows_argument)
    })
}

/// The part of a compound Bash command that a rule with an argument excludes, and that rule.
fn excluded_part<'r>(call: &Call<'r>) -> Option<(String, &'r Rule)> {
    let parts = compound::all_parts(call.reading?, bash_command(call)?)?;
    parts.into_iter().find_map(|part| {
        call.rule_for_part(&part)
            .filter(|r| r.permission == Permission::Exclude && r.has_argument())
            .map(|r| (part, r))
    })
}

fn bash_command<'a>(call: &Call<'a>) -> Option<&'a str> {
    crate::catalog::command(call.tool, call.args)
}

/// The rule to suggest for a call that needs permission: the file itself for a tool that
/// takes a path (`Write(src/a.rs)`, not all of `Write`), else Continue's "remember" rule.
fn narrow_allow_rule(call: &Call<'_>) -> String {
    match super::pattern::argument_of(call.tool) {
        Some((_, kind)) if kind.is_path() => argument_hint(call.tool, call.args, call.ws),
        _ => None,
    }
    .unwrap_or_else(|| suggest_allow_rule(call.tool, call.args))
}

/// The verdict of the first matching rule alone (no match: ask).
fn static_decision(call: &Call<'_>, rule: Option<&Rule>) -> Decision {
    let Some(rule) = rule else {
        return Decision {
            permission: Permission::Ask,
            rule: None,
            source: Source::NoMatch,
            reason: format!(
                "no rule matches `{}`, and a call no rule covers needs permission",
                call.tool
            ),
            allow_hint: Some(narrow_allow_rule(call)),
        };
    };
    let reason = explain::by_rule(call.tool, rule, &call.origin(rule.source));
    let allow_hint = match (rule.permission, rule.source) {
        (Permission::Allow, _) | (Permission::Exclude, Source::Mode) => None,
        _ => Some(narrow_allow_rule(call)),
    };
    Decision {
        permission: rule.permission,
        rule: Some(rule.text.clone()),
        source: rule.source,
        reason,
        allow_hint,
    }
}
