//! result.json: one object a pipeline reads to learn how a run ended. Built only from
//! events (see [`super::fold`]), so the run and `cn-run report` write the same file.
//! Fields that mean what a field of `claude -p`'s result means have that name.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::conversation::Usage;
pub use crate::events::DiffStat;
use crate::exit_code::{Limit, Status};

/// A tool call that was not allowed to run as asked. The first three fields have the
/// names and shapes of `claude -p`'s `permission_denials` items; the rest are cn-run's
/// (when, which rule, why, and how to allow it).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Denial {
    /// The tool's name (`Bash`, `Edit`, `server__tool`).
    #[serde(rename = "tool_name")]
    pub tool: String,
    /// The model's id of the call.
    #[serde(rename = "tool_use_id")]
    pub call_id: String,
    /// The call's arguments as an object, with secret values masked.
    #[serde(rename = "tool_input")]
    pub arguments: Value,
    /// The turn the call was made in (cn-run's).
    pub turn: u32,
    /// `ask` or `exclude`.
    pub permission: String,
    /// `denied` (the model was told), `failed` (the run stopped) or `allowed` (on_ask: allow).
    pub resolution: String,
    pub rule: Option<String>,
    pub source: String,
    pub reason: String,
    /// A permission pattern that would allow the call.
    pub allow_hint: Option<String>,
}

/// The result of one run.
/// A rule that joined the system message (a `rule.applied` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AppliedRule {
    /// The turn it joined before (0: from the start).
    pub turn: u32,
    pub name: String,
    pub origin: crate::events::RuleOrigin,
    /// Why it applies (`always applies`, or the file a call touched).
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunResult {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub schema_version: u32,
    /// `success`, or `error_<why>` (`error_max_turns`, `error_timeout`, …), as in `claude -p`.
    pub subtype: String,
    pub status: Status,
    pub exit_code: i32,
    pub is_error: bool,
    /// Why the run ended, in words.
    pub reason: String,
    pub limit: Option<Limit>,
    /// Why the model stopped its last response: `stop`, `tool_calls`, `length` (cut by the
    /// output-token limit), `content_filter`, or the server's own word; null before any.
    pub stop_reason: Option<String>,
    /// The agent's final answer.
    pub result: String,
    /// Whether the agent finished its work (even if checks then failed).
    pub agent_finished: bool,
    pub run_id: String,
    pub session_id: String,
    pub job: String,
    pub provider: String,
    pub model: String,
    pub num_turns: u32,
    pub num_tool_calls: u32,
    pub duration_ms: u64,
    pub usage: Usage,
    /// `null` when the price is unknown; never a silent 0.
    pub total_cost_usd: Option<f64>,
    pub cost_unknown: bool,
    pub permission_denials: Vec<Denial>,
    /// Calls held for a person (`on_ask: defer`, a hook's `defer`) and not answered yet:
    /// `cn-run --resume RUN --approve TOOL_USE_ID` runs one, `--deny TOOL_USE_ID` refuses it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_approvals: Vec<Denial>,
    /// Attempts made (more than 1 when failed checks sent the agent back to work).
    pub attempts: u32,
    /// Every check run, per attempt.
    pub checks: Vec<crate::checks::CheckResult>,
    /// The names of the checks the job declares (also those that never ran).
    pub checks_declared: Vec<String>,
    /// The final answer as JSON, when the job has an `output_schema` and it validated.
    pub structured_output: Option<Value>,
    pub checklist: Option<String>,
    /// Files collected from the job's `artifacts:` and uploaded by the agent.
    pub artifacts: Vec<crate::tools::ArtifactRecord>,
    /// What the run changed (null outside git).
    pub diff: Option<DiffStat>,
    /// diff.patch of the run's changes.
    pub patch_path: Option<String>,
    /// Each file of diff.patch with its line counts (from `changes.recorded`; not in
    /// result.json: the step summary lists them).
    #[serde(skip)]
    #[schemars(skip)]
    pub changed_files: Vec<crate::report::github::patch_files::FileChange>,
    /// The diff contains a value of a known secret (the patch stays exact; review it).
    pub secret_in_diff: bool,
    pub checkpoints: Vec<crate::events::Checkpoint>,
    /// Untracked files and folders left out of the checkpoints and diff.patch for their
    /// size (`git.max_file_size`, `git.max_dir_files`); rollback leaves them alone.
    pub skipped: Vec<crate::checkpoint::Skipped>,
    /// Bytes of git objects the run's checkpoints added to the repository (null without
    /// checkpoints); removed with the run's refs (`cn-run sessions prune`, `git.keep`).
    pub git_added_bytes: Option<u64>,
    /// Rules that joined the system message, when and why.
    pub rules_applied: Vec<AppliedRule>,
    /// The last upload of the session (null when the run has no upload URL).
    pub upload: Option<crate::upload::UploadStatus>,
    /// The upload of the artifacts (null unless `upload.artifacts_url` is set).
    pub artifacts_upload: Option<crate::upload::UploadStatus>,
    /// The Bash sandbox in force (null when off).
    pub sandbox: Option<crate::sandbox::SandboxStatus>,
    /// Every MCP server of the job and how its start went.
    pub mcp_servers: Vec<crate::mcp::ServerStatus>,
    pub warnings: Vec<String>,
    /// This run's JUnit testsuite (secrets masked), for a combined `--junit` report.
    #[serde(skip)]
    #[schemars(skip)]
    pub junit_suite: Option<quick_junit::TestSuite>,
    pub started_at: String,
    pub finished_at: String,
    /// Where this run's files are.
    pub output_dir: String,
    pub events_path: String,
    pub session_path: Option<String>,
    /// report.html, the run as one self-contained page (null when turned off).
    pub report_path: Option<String>,
    pub workspace: String,
    /// `worktree` when the run worked in a throwaway git worktree (removed afterwards; its
    /// changes are in diff.patch and the checkpoint refs).
    pub isolation: Option<crate::events::Isolation>,
    /// The run's OpenTelemetry trace id (32 hex digits) when it has one: the caller's
    /// `TRACEPARENT` trace, or its own when OTLP export is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

impl RunResult {
    pub fn subtype_for(status: Status, limit: Option<Limit>) -> String {
        match (status, limit) {
            (Status::Success, _) => "success".to_owned(),
            (Status::LimitReached, Some(Limit::MaxTurns)) => "error_max_turns".to_owned(),
            (Status::LimitReached, Some(Limit::Timeout)) => "error_timeout".to_owned(),
            (Status::LimitReached, Some(Limit::MaxCost)) => "error_max_budget_usd".to_owned(),
            (Status::LimitReached, Some(Limit::MaxTokens)) => "error_max_tokens".to_owned(),
            (Status::Failed, _) => "error_during_execution".to_owned(),
            (other, _) => format!("error_{}", other.as_str()),
        }
    }

    /// The run's files do not hold its outcome (a write failed): it is an environment
    /// error, said in `reason`, whatever the run itself came to.
    pub fn files_failed(&mut self, reason: String) {
        self.status = Status::InternalError;
        self.exit_code = Status::InternalError.exit_code();
        self.is_error = true;
        self.subtype = Self::subtype_for(Status::InternalError, None);
        self.limit = None;
        self.reason = reason;
    }
}
