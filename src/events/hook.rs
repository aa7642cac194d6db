//! A hook's run as `hook.ran` carries it: the hook event it ran for, where it was written
//! and the decision it gave.
//!
//! Owned here so the event schema needs nothing from `hooks` (which fires them and
//! re-exports these, keeping the logic that parses and interprets hooks).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The events cn-run fires hooks on, by Claude Code's names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum HookEvent {
    /// Before a tool call runs: may allow (an ask only), deny, ask, defer or rewrite it.
    PreToolUse,
    /// After a tool call ran: may add context for the model or block with a reason.
    PostToolUse,
    /// The task is about to go to the model: may add context or refuse it.
    UserPromptSubmit,
    /// The agent answered without calling a tool: may send it back to work with a reason.
    Stop,
    /// A nested agent (the Subagent tool) answered.
    SubagentStop,
    /// The run starts (`startup`) or a resume picks it up (`resume`).
    SessionStart,
    /// The run ends.
    SessionEnd,
    /// The history is about to be compacted.
    PreCompact,
    /// cn-run needs someone's attention: a call needed approval.
    Notification,
}

impl HookEvent {
    /// Claude Code's name of the event (`hook_event_name`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }
}

/// The decision a hook gave. Ordered from the weakest to the strongest, so of several
/// hooks' answers the strongest wins.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum HookDecision {
    /// No decision (the default path).
    #[serde(rename = "none")]
    Nothing,
    /// PreToolUse: answer the policy's ask with yes.
    Allow,
    /// PreToolUse: the call needs someone's permission.
    Ask,
    /// PreToolUse: stop the run here for a person to approve.
    Defer,
    /// PreToolUse: refuse the call; other events: block (the reason goes to the model).
    Block,
}

impl HookDecision {
    /// The word events.jsonl carries.
    pub fn as_str(self) -> &'static str {
        match self {
            HookDecision::Nothing => "none",
            HookDecision::Allow => "allow",
            HookDecision::Ask => "ask",
            HookDecision::Defer => "defer",
            HookDecision::Block => "block",
        }
    }
}

/// Where a hook was written: the job's author, or the repository the run works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HookOrigin {
    Job,
    Repository,
}
