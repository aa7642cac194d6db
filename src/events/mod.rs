//! The one event enum every output of a run is translated from.
//!
//! events.jsonl is these events, one per line; result.json, junit.xml, the session file,
//! stream-json on stdout and the progress display are built by feeding them through pure
//! translators (see `report`). Adding an output never means adding bookkeeping to the loop.

/// `Display` for the events' words: what `as_str` gives, as events.jsonl writes it.
macro_rules! display_as_str {
    ($($t:ty),* $(,)?) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

mod changes;
mod config;
mod groups;
mod hook;
mod kinds;
mod mcp;
mod permission;
mod records;
mod sandbox;
mod sink;

pub use changes::{Changes, Checkpoint, DiffStat, FileChange, Kind, Skipped};
pub use config::{ResolvedConfig, ResolvedFlags, ResolvedLimits, ResolvedModel, ResolvedTrust};
pub(crate) use groups::ignored;
pub use hook::{HookDecision, HookEvent, HookOrigin};
pub use kinds::{ErrorKind, Isolation, RuleOrigin, UploadTarget};
pub use mcp::{LogLevel, ServerState, ServerStatus, TransportKind};
pub use permission::{Decision, Mode, Permission, RuleView, Source};
pub use records::{ArtifactRecord, CheckResult};
pub use sandbox::{
    ContainedBy, GitAccess, Limits, LimitsRecord, MemoryBy, ProcessesBy, Protection, SandboxMode,
    SandboxStatus,
};
pub use sink::{Emitter, EventSink, MemorySink, Shared, now_rfc3339 as now};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Message, ToolCall, Usage};
use crate::exit_code::{Limit, Status};

display_as_str!(
    ErrorKind,
    HookDecision,
    HookEvent,
    IncompleteAction,
    Isolation,
    Permission,
    RuleOrigin,
);

/// Version of the event and result formats. Bumped on any breaking change.
pub const SCHEMA_VERSION: u32 = 1;

/// What the dispatcher did with a tool call after the permission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Allowed,
    Denied,
    Failed,
    /// Held for a person (`on_ask: defer` or a hook's `defer`): the run stops, the call
    /// is pending in result.json until `--resume RUN --approve ID` (or `--deny ID`).
    Deferred,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    Denied,
}

/// One thing that happened during a run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "run.started")]
    RunStarted {
        job: String,
        /// The task as the model receives it.
        prompt: String,
        provider: String,
        model: String,
        workspace: String,
        tools: Vec<String>,
        /// The permission mode.
        mode: Mode,
        resumed: bool,
        /// A resumed run that goes on where the earlier process stopped short (a limit, a
        /// signal, a crash), without a new instruction: one run with the one before it, so
        /// its result counts both (the calls, denials and checks of each).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        continues: bool,
        /// The run's folder (result.json, events.jsonl, session.json, diff.patch).
        #[serde(default)]
        output_dir: String,
        #[serde(default)]
        session_path: Option<String>,
        /// The names of the checks the job declares (also those that never run).
        #[serde(default)]
        checks: Vec<String>,
        /// `worktree` when the run works in a throwaway git worktree.
        #[serde(default)]
        isolation: Option<Isolation>,
        /// The Bash sandbox in force (null when off); `mechanism: pending` when it is still
        /// being set up (then `sandbox.established` follows once it is).
        #[serde(default)]
        sandbox: Option<Box<SandboxStatus>>,
        /// The permission rules in force, in evaluation order (as `cn-run explain` shows
        /// them), for the HTML report.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        policy: Vec<RuleView>,
        /// Where the run writes its HTML report (null when `--html off` or the job's
        /// `outputs: {html: false}` turn it off).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report_path: Option<String>,
        /// The run's OpenTelemetry trace id (32 hex digits): the caller's `TRACEPARENT`
        /// trace, or the run's own when telemetry is exported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_id: Option<String>,
    },
    #[serde(rename = "attempt.started")]
    AttemptStarted { attempt: u32 },
    #[serde(rename = "turn.started")]
    TurnStarted { turn: u32 },
    #[serde(rename = "model.retry")]
    ModelRetry {
        turn: u32,
        attempt: u32,
        delay_ms: u64,
        error_kind: ErrorKind,
        message: String,
        /// The wait the server named (`retry-after`, a reset header, `RetryInfo`, "retry in
        /// 1.4s"), when it named one: `delay_ms` is that wait.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    #[serde(rename = "assistant.message")]
    AssistantMessage {
        turn: u32,
        text: String,
        tool_calls: Vec<ToolCall>,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// Why the model stopped: `stop`, `tool_calls`, `length`, `content_filter`, or the
        /// server's own word.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<String>,
    },
    /// The answer did not end normally (`agent/stop_reason.rs`): cut (`length`), filtered
    /// (`content_filter`, also a prompt the filter refused), the context window filled
    /// (`model_context_window_exceeded`), paused (`pause_turn`) or a stop word cn-run does not
    /// know. `action` is `continue` (the model is asked to go on), `compact` (the history is
    /// compacted first), `fail` (the run ends, exit 1) or `accept` (taken as final, said so).
    #[serde(rename = "output.incomplete")]
    OutputIncomplete {
        turn: u32,
        stop_reason: String,
        action: IncompleteAction,
    },
    #[serde(rename = "permission.decision")]
    PermissionDecision {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: Value,
        resolution: Resolution,
        #[serde(flatten)]
        decision: Decision,
    },
    /// A hook (Claude Code's protocol) ran: what it decided, or how it failed.
    #[serde(rename = "hook.ran")]
    HookRan {
        /// The hook event (`PreToolUse`, `Stop`, …).
        hook_event: HookEvent,
        /// The command's first line.
        command: String,
        origin: HookOrigin,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// `none`, `allow`, `ask`, `defer` or `block`.
        decision: HookDecision,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// `timeout`, `crashed`, `not_started` or `error`, with what happened.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stderr: Option<String>,
        duration_ms: u64,
    },
    #[serde(rename = "tool.started")]
    ToolStarted {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: Value,
        /// The policy's verdict that let the call run: the rule, its source, the reason
        /// (a call that was not allowed outright also has its `permission.decision`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<Decision>,
    },
    #[serde(rename = "tool.finished")]
    ToolFinished {
        turn: u32,
        call_id: String,
        tool: String,
        status: ToolStatus,
        output: String,
        duration_ms: u64,
    },
    /// A turn ended; the run's counters so far (all turns, nested agents' included).
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        turn: u32,
        #[serde(default)]
        num_turns: u32,
        #[serde(default)]
        usage: Usage,
        #[serde(default)]
        total_cost_usd: Option<f64>,
    },
    #[serde(rename = "compaction")]
    Compaction {
        turn: u32,
        tokens_before: u64,
        tokens_after: u64,
        messages_before: usize,
        messages_after: usize,
    },
    #[serde(rename = "checkpoint.created")]
    CheckpointCreated {
        turn: u32,
        index: u32,
        reference: String,
        commit: String,
        call_id: Option<String>,
        /// What caused it, e.g. `Edit call_1`, or `start`.
        #[serde(default)]
        label: String,
        /// Files added, modified or deleted since the previous checkpoint.
        #[serde(default)]
        files_changed: usize,
        /// Untracked files and folders left out of the snapshot for their size.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<Skipped>,
    },
    #[serde(rename = "check.finished")]
    CheckFinished(CheckResult),
    #[serde(rename = "output.validated")]
    OutputValidated {
        valid: bool,
        errors: Vec<String>,
        /// The final answer as JSON, when it validated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
    },
    #[serde(rename = "artifact.collected")]
    ArtifactCollected(ArtifactRecord),
    /// An upload ended: the session's (on failure, on recovery and at the end) or the
    /// artifacts'. The status fields are those of result.json's `upload`.
    #[serde(rename = "upload.finished")]
    UploadFinished {
        /// `session` or `artifacts`.
        #[serde(default)]
        target: UploadTarget,
        ok: bool,
        status: Option<u16>,
        message: String,
        #[serde(default)]
        uploads: u32,
        #[serde(default)]
        failures: u32,
        #[serde(default)]
        last_error: Option<String>,
        #[serde(default)]
        last_at: Option<String>,
    },
    #[serde(rename = "mcp.server")]
    McpServer(ServerStatus),
    /// What the run changed, measured once at the end: diff.patch, its stats, the
    /// checkpoints kept and the git storage they added.
    #[serde(rename = "changes.recorded")]
    ChangesRecorded(Changes),
    /// A server's progress or log notification (src/mcp/notices.rs bounds how many);
    /// `kind` is `progress`, `log`, or `suppressed` (the last one recorded for a server).
    #[serde(rename = "mcp.notification")]
    McpNotification {
        server: String,
        kind: NoticeKind,
        /// The tool call a progress notification belongs to.
        call_id: Option<String>,
        /// A log message's level (`info`, `warning`, …).
        level: Option<LogLevel>,
        progress: Option<f64>,
        total: Option<f64>,
        message: Option<String>,
    },
    #[serde(rename = "rule.applied")]
    RuleApplied {
        turn: u32,
        name: String,
        origin: RuleOrigin,
        reason: String,
    },
    /// The run's sandbox once set up, when `run.started` could not say it yet (it is set up
    /// while the run starts, and the first command waits for it): what is enforced.
    #[serde(rename = "sandbox.established")]
    SandboxEstablished { sandbox: Box<SandboxStatus> },
    #[serde(rename = "warning")]
    Warning { message: String },
    /// The conversation gained a message, whole (a tool result with every byte and its
    /// images, an answer with its reasoning, a message the runner adds). session.jsonl is
    /// the fold of these and the events below (`session::EventFold`).
    #[serde(rename = "message.appended")]
    MessageAppended { message: Message },
    /// The conversation was rewritten (a compaction): the whole history from here on.
    #[serde(rename = "history.replaced")]
    HistoryReplaced { history: Vec<Message> },
    /// The run's resolved configuration (flags, job file and defaults as one value), as
    /// `cn-run explain` prints it; the upload URL is never in it.
    #[serde(rename = "config.resolved")]
    ConfigResolved { config: Box<ResolvedConfig> },
    /// The session is complete: what a resume of this run starts from. Comes before the
    /// session is uploaded and before `run.completed`.
    #[serde(rename = "session.finished")]
    SessionFinished {
        status: Status,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checklist: Option<String>,
        num_turns: u32,
        usage: Usage,
        total_cost_usd: Option<f64>,
    },
    #[serde(rename = "run.completed")]
    RunCompleted {
        status: Status,
        exit_code: i32,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<Limit>,
        result: String,
        num_turns: u32,
        duration_ms: u64,
        usage: Usage,
        total_cost_usd: Option<f64>,
        cost_unknown: bool,
        /// Whether the agent finished its work (even if checks then failed).
        #[serde(default)]
        agent_finished: bool,
        /// The checklist the agent kept, as last written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checklist: Option<String>,
    },
}

/// What the run does about an answer that did not end normally (`output.incomplete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IncompleteAction {
    /// The model is asked to go on.
    Continue,
    /// The history is compacted first.
    Compact,
    /// The run ends (exit 1).
    Fail,
    /// The answer is taken as final, with a warning.
    Accept,
}

impl IncompleteAction {
    /// The word events.jsonl carries.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Compact => "compact",
            Self::Fail => "fail",
            Self::Accept => "accept",
        }
    }
}

/// What an `mcp.notification` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    Progress,
    Log,
    /// The last one recorded for a server: more came than are kept.
    Suppressed,
}

/// An event with the fields every line of events.jsonl carries.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Envelope {
    pub schema_version: u32,
    pub seq: u64,
    /// RFC 3339 UTC timestamp with milliseconds.
    pub ts: String,
    pub run_id: String,
    /// Set on events of a nested agent: the Subagent call it works for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    #[serde(flatten)]
    pub event: Event,
}

/// The JSON schema of one line of events.jsonl.
pub fn event_schema() -> serde_json::Value {
    crate::json_schema::schema_for::<Envelope>()
}

#[cfg(test)]
#[path = "roundtrip_tests.rs"]
mod roundtrip_tests;

/// A whole `config.resolved` record, for tests.
#[cfg(test)]
pub(crate) use config::sample as config_sample;
