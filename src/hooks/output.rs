//! What a hook said, read as Claude Code reads it: exit code 0 (its stdout may be JSON),
//! 2 (a block: its stderr is the reason, for the model) or anything else (a non-blocking
//! error, reported). The JSON fields are Claude Code's: `continue`/`stopReason`,
//! `decision`/`reason`, and `hookSpecificOutput` with `permissionDecision`,
//! `permissionDecisionReason`, `updatedInput` and `additionalContext`.

use serde::Deserialize;
use serde_json::Value;

use super::config::HookEvent;

/// How a hook process ended when it did not end by itself with an exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It ran past its timeout and was killed.
    Timeout(u64),
    /// It was killed by a signal (a crash), or the run stopped it.
    Killed,
    /// It could not be started.
    Spawn(String),
    /// It exited with a code other than 0 and 2 (a non-blocking error in Claude Code).
    Exit(i32),
}

impl Failure {
    /// The failure's name in events (`timeout`, `crashed`, `not_started`, `error`).
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Timeout(_) => "timeout",
            Failure::Killed => "crashed",
            Failure::Spawn(_) => "not_started",
            Failure::Exit(_) => "error",
        }
    }

    /// Whether the hook gave no answer at all (hung, crashed, never ran), as opposed to
    /// answering with an error code.
    pub fn is_silent(&self) -> bool {
        !matches!(self, Failure::Exit(_))
    }

    pub fn describe(&self) -> String {
        match self {
            Failure::Timeout(s) => format!("timed out after {s} s and was killed"),
            Failure::Killed => "was killed before it finished (crashed)".to_owned(),
            Failure::Spawn(e) => format!("could not start: {e}"),
            Failure::Exit(code) => format!("exited with code {code}"),
        }
    }
}

pub use crate::events::HookDecision;

/// One hook's answer, interpreted for its event.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub said: HookDecision,
    pub reason: Option<String>,
    /// PreToolUse: the call's input as the hook rewrote it (Claude Code's field names).
    pub updated_input: Option<Value>,
    /// Text for the model (`additionalContext`, or plain stdout where Claude Code adds it).
    pub context: Option<String>,
    /// `continue: false`: the run stops, with this reason.
    pub stop: Option<String>,
    pub failure: Option<Failure>,
}

impl Verdict {
    fn nothing() -> Verdict {
        Verdict {
            said: HookDecision::Nothing,
            reason: None,
            updated_input: None,
            context: None,
            stop: None,
            failure: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Output {
    #[serde(rename = "continue")]
    go_on: Option<bool>,
    stop_reason: Option<String>,
    decision: Option<String>,
    reason: Option<String>,
    hook_specific_output: Option<Specific>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Specific {
    permission_decision: Option<String>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
}

/// Reads what a hook of `event` said: its exit code (`None` with a `failure`), stdout
/// and stderr.
pub fn interpret(
    event: HookEvent,
    code: Option<i32>,
    failure: Option<Failure>,
    stdout: &str,
    stderr: &str,
) -> Verdict {
    let mut v = Verdict::nothing();
    if let Some(f) = failure {
        if event == HookEvent::PreToolUse && f.is_silent() {
            // A policy hook that gave no answer refuses the call (fail closed).
            v.said = HookDecision::Block;
            v.reason = Some(format!("the PreToolUse hook {}", f.describe()));
        }
        v.failure = Some(f);
        return v;
    }
    match code {
        Some(0) => from_stdout(event, stdout),
        Some(2) => {
            if blocks(event) {
                v.said = HookDecision::Block;
                v.reason = Some(stderr.trim().to_owned());
            }
            v
        }
        // A shell reports a command killed by signal N as 128 + N: a crash.
        Some(code) if (129..=128 + 64).contains(&code) => {
            v.failure = Some(Failure::Killed);
            from_failure(event, v)
        }
        Some(other) => {
            v.failure = Some(Failure::Exit(other));
            v
        }
        None => {
            v.failure = Some(Failure::Killed);
            from_failure(event, v)
        }
    }
}

fn from_failure(event: HookEvent, mut v: Verdict) -> Verdict {
    if event == HookEvent::PreToolUse {
        v.said = HookDecision::Block;
        v.reason = Some(format!(
            "the PreToolUse hook {}",
            Failure::Killed.describe()
        ));
    }
    v
}

/// Events whose exit code 2 blocks something (the others only report it). PreCompact's
/// block skips the compaction (Claude Code 2.1.105 on).
fn blocks(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
    )
}

/// Events whose plain stdout (exit 0, not JSON) is context for the model (PreCompact's:
/// instructions for the summary).
fn stdout_is_context(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::UserPromptSubmit | HookEvent::SessionStart | HookEvent::PreCompact
    )
}

fn from_stdout(event: HookEvent, stdout: &str) -> Verdict {
    let mut v = Verdict::nothing();
    let text = stdout.trim();
    let parsed = text
        .starts_with('{')
        .then(|| serde_json::from_str::<Output>(text).ok())
        .flatten();
    let Some(out) = parsed else {
        if stdout_is_context(event) && !text.is_empty() {
            v.context = Some(text.to_owned());
        }
        return v;
    };
    if out.go_on == Some(false) {
        v.stop = Some(out.stop_reason.clone().unwrap_or_default());
    }
    let specific = out.hook_specific_output.unwrap_or_default();
    // PreCompact has no hookSpecificOutput in Claude Code: only plain stdout instructs.
    if event != HookEvent::PreCompact {
        v.context = specific.additional_context;
    }
    if event == HookEvent::PreToolUse {
        v.updated_input = specific.updated_input;
        let (said, reason) = match specific.permission_decision.as_deref() {
            Some(word) => (permission(word), specific.permission_decision_reason),
            // The older top-level form: `approve` / `block`.
            None => (legacy(out.decision.as_deref()), out.reason),
        };
        v.said = said;
        v.reason = reason;
    } else if out.decision.as_deref() == Some("block") && blocks(event) {
        v.said = HookDecision::Block;
        v.reason = out.reason;
    }
    v
}

fn permission(word: &str) -> HookDecision {
    match word {
        "allow" => HookDecision::Allow,
        "deny" => HookDecision::Block,
        "ask" => HookDecision::Ask,
        "defer" => HookDecision::Defer,
        _ => HookDecision::Nothing,
    }
}

fn legacy(word: Option<&str>) -> HookDecision {
    match word {
        Some("approve") => HookDecision::Allow,
        Some("block") => HookDecision::Block,
        _ => HookDecision::Nothing,
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
