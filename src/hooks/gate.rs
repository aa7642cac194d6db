//! Where a PreToolUse hook's answer meets the permission policy, and where a person's
//! approval of a deferred call does. The rule: a hook may tighten anything and may answer
//! the policy's `ask`; it never widens past `exclude` — a disabled command, an exclude
//! rule, plan mode, a secret on its way out. The decision that results is an ordinary
//! [`Decision`] (source `hook` or `approval`), so result.json's denials and the event
//! stream say who decided.

use crate::permissions::{Decision, Permission, Source};

use super::output::HookDecision;

/// What the hooks of one call said, together.
#[derive(Debug, Clone, Default)]
pub struct HookAnswer {
    /// The strictest decision: deny > defer > ask > allow (Claude Code's order).
    pub said: Option<HookDecision>,
    /// The hook whose decision that is (`PreToolUse `command``).
    pub rule: Option<String>,
    pub reason: Option<String>,
    /// The call's input as a hook rewrote it (cn-run's field names).
    pub updated_input: Option<serde_json::Value>,
    /// Text for the model, added to the call's result.
    pub context: Vec<String>,
    /// `continue: false`: the run stops after this call, with this reason.
    pub stop: Option<String>,
}

/// How a call resolves once the hooks (or a person) have spoken.
#[derive(Debug, Clone, PartialEq)]
pub enum Gated {
    /// The policy's decision stands.
    Policy(Decision),
    /// A hook asks for permission where the policy allowed: resolved by `on_ask`.
    Asks(Decision),
    /// A hook or a person refused the call.
    Refused(Decision),
    /// A hook or a person answered the policy's ask with yes (the decision keeps
    /// `permission: ask`, so result.json says what was asked and who answered).
    Answered(Decision),
    /// A hook deferred the call to a person.
    Defer(Decision),
}

/// Combines the policy's `decision` with the hooks' `answer`.
pub fn combine(decision: Decision, answer: &HookAnswer) -> Gated {
    let Some(said) = answer.said.filter(|s| *s != HookDecision::Nothing) else {
        return Gated::Policy(decision);
    };
    if decision.permission == Permission::Exclude {
        // Nothing a hook says opens what the policy closed.
        return Gated::Policy(decision);
    }
    if said == HookDecision::Allow && only_a_rule_answers(&decision) {
        return Gated::Policy(decision);
    }
    let why = |default: &str| {
        answer
            .reason
            .clone()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let hook = |permission, reason: String| Decision {
        permission,
        rule: answer.rule.clone(),
        source: Source::Hook,
        reason,
        allow_hint: None,
    };
    match (said, decision.permission) {
        (HookDecision::Block, _) => Gated::Refused(hook(
            Permission::Exclude,
            why("a PreToolUse hook denied the call"),
        )),
        (HookDecision::Defer, _) => Gated::Defer(Decision {
            allow_hint: decision.allow_hint,
            ..hook(
                Permission::Ask,
                why("a PreToolUse hook deferred the call to a person"),
            )
        }),
        (HookDecision::Ask, Permission::Allow) => Gated::Asks(hook(
            Permission::Ask,
            why("a PreToolUse hook asks for permission"),
        )),
        (HookDecision::Allow, Permission::Ask) => Gated::Answered(hook(
            Permission::Ask,
            format!(
                "a PreToolUse hook answered the policy's ask ({}): {}",
                decision.reason.trim_end_matches('.'),
                why("allowed")
            ),
        )),
        _ => Gated::Policy(decision),
    }
}

/// A person's answer to a deferred call, given with `--resume RUN --approve ID` or
/// `--deny ID [--reason TEXT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Approve,
    Deny(Option<String>),
}

/// What a person's `approval` makes of the policy's `decision`: an approval answers an
/// ask (never an exclude), a denial always holds.
pub fn approved(decision: Decision, approval: &Approval) -> Gated {
    let person = |permission, rule: &str, reason: String| Decision {
        permission,
        rule: Some(rule.to_owned()),
        source: Source::Approval,
        reason,
        allow_hint: None,
    };
    match approval {
        Approval::Deny(why) => Gated::Refused(person(
            Permission::Exclude,
            "--deny",
            match why {
                Some(w) => format!("a reviewer denied the call: {w}"),
                None => "a reviewer denied the call".to_owned(),
            },
        )),
        Approval::Approve
            if decision.permission == Permission::Exclude || only_a_rule_answers(&decision) =>
        {
            Gated::Policy(decision)
        }
        Approval::Approve => Gated::Answered(person(
            Permission::Ask,
            "--approve",
            format!(
                "a reviewer approved the deferred call ({})",
                decision.reason.trim_end_matches('.')
            ),
        )),
    }
}

/// An ask only a rule naming the path can answer: a write into `.git` (hooks, config) or
/// outside the workspace.
fn only_a_rule_answers(decision: &Decision) -> bool {
    decision
        .rule
        .as_deref()
        .is_some_and(crate::permissions::needs_a_named_rule)
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
