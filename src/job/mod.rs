//! Jobs: the YAML file a user writes, parsed into raw types (`file`), checked against the
//! generated schema with every problem located (`load`, `locate`), and resolved into the
//! validated [`Job`] the rest of cn-run works with (`resolve`).

pub mod bash_limits;
mod cron;
mod error;
pub mod file;
mod load;
mod locate;
mod prune;
mod resolve;
mod resolve_model;
mod resolve_net;
mod resolve_sections;
mod rule_tools;
mod schema_msg;
mod suggest;
pub mod template;
mod units;
mod yaml_shape;

pub use cron::{CronLineError, CronTab, Missed, NotPortable, Schedule};
pub use error::{JobError, Problem, ValueError};
pub use file::{JobFile, OnAsk, ProviderKind};
pub use load::{LoadOptions, job_schema, load_file, load_raw, load_str};
pub use locate::{Locator, Pos};
pub(crate) use rule_tools::unknown_tool as unknown_rule_tool;
pub use units::parse_duration;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::permissions::Mode;

/// A validated job, ready to run.
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    pub description: Option<String>,
    /// The job file, when the job came from one.
    pub source: Option<PathBuf>,
    pub model: ModelSpec,
    /// The prompt with parameters substituted; `None` means read it from stdin (`-`).
    pub prompt: Option<String>,
    pub params: BTreeMap<String, String>,
    pub rules: Vec<Rule>,
    pub permissions: PermissionSpec,
    pub limits: Limits,
    pub tools: ToolSettings,
    pub workspace: WorkspaceSpec,
    pub checks: Vec<Check>,
    /// Attempts in all (at least 1).
    pub max_attempts: u32,
    /// The JSON schema of the final answer.
    pub output_schema: Option<serde_json::Value>,
    pub artifacts: Vec<String>,
    pub git: GitSettings,
    /// Extra environment variable names whose values are secrets.
    pub redact: Vec<String>,
    /// Content (prompts, answers, tool arguments and output) goes on telemetry.
    pub capture_content: bool,
    pub upload: Option<UploadSpec>,
    /// The run store's URL (`--store` wins).
    pub store: Option<String>,
    pub mcp_servers: Vec<McpServerSpec>,
    pub subagents: Vec<file::SubagentSection>,
    pub untrusted_paths: Vec<String>,
    pub base_ref: Option<String>,
    /// Extra skill folders (absolute).
    pub skills: Vec<PathBuf>,
    /// When `cn-run schedule` starts the job; `None`: never on its own.
    pub schedule: Option<Schedule>,
    /// Whether the run writes report.html (the job's `outputs.html`, default true).
    pub html: bool,
    /// The job's hooks (Claude Code's format).
    pub hooks: crate::hooks::HooksSection,
    /// Run the repository's `.claude/` and `.continue/` settings hooks too (trusted runs
    /// only).
    pub repo_hooks: bool,
    /// The files the job named (rule files, the output schema) as this load read them, by
    /// the path the job gives: a run keeps them so that its resumes read the same text.
    pub files_read: std::collections::BTreeMap<String, String>,
}

/// An MCP server as the job declares it (`${NAME}` values resolved when the run starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    pub name: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub url: Option<String>,
    pub headers: Vec<(String, String)>,
    pub optional: bool,
    pub startup_timeout: Option<Duration>,
    pub call_timeout: Option<Duration>,
}

/// A post-run check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub run: String,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSettings {
    pub checkpoints: bool,
    pub rollback_on_failure: bool,
    /// Untracked files over this many bytes are not snapshotted.
    pub max_file_bytes: u64,
    /// Untracked folders with more files than this are not snapshotted.
    pub max_dir_files: usize,
    /// Binary content in diff.patch.
    pub binary_patch: bool,
    /// How many runs' checkpoints to keep; `None`: all.
    pub keep: Option<u32>,
}

impl Default for GitSettings {
    fn default() -> Self {
        GitSettings {
            checkpoints: true,
            rollback_on_failure: false,
            max_file_bytes: 10 << 20,
            max_dir_files: 10_000,
            binary_patch: false,
            keep: None,
        }
    }
}

/// Where and how often to upload the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadSpec {
    /// The URL itself, or the variable that holds it (resolved when the run starts).
    pub url: Option<String>,
    pub url_env: Option<String>,
    /// Where diff.patch goes (the URL, or the variable that holds it); none: no diff upload.
    pub diff_url: Option<String>,
    pub diff_url_env: Option<String>,
    pub artifacts_url: Option<String>,
    pub artifacts_url_env: Option<String>,
    pub interval: Duration,
}

/// The model, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub provider: ProviderKind,
    pub name: String,
    pub api_base: Option<String>,
    pub api_key_env: Option<String>,
    pub context_length: Option<u64>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub script: Option<PathBuf>,
    /// Header name and raw value (`${NAME}` resolved when the client is built).
    pub headers: Vec<(String, String)>,
    pub max_retries: Option<u32>,
    pub initial_retry_delay: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub request_timeout: Option<Duration>,
    pub tool_call_format: file::ToolCallFormat,
    pub pricing: Option<crate::context::pricing::Price>,
    /// Send `stream_options` to OpenAI-compatible servers.
    pub stream_usage: bool,
    /// Anthropic extended thinking budget.
    pub thinking_budget: Option<u32>,
    pub deployment: Option<String>,
    pub api_version: Option<String>,
}

/// A rule for the system message (see `crate::rules`).
pub type Rule = crate::rules::RuleDef;

/// The job's permission policy, as written (patterns are compiled by `permissions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSpec {
    pub mode: Mode,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub exclude: Vec<String>,
    pub on_ask: OnAsk,
    /// A repo permissions.yaml named by the job (relative to the workspace).
    pub file: Option<String>,
}

/// Run limits; `None` means unlimited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub max_turns: Option<u32>,
    pub timeout: Option<Duration>,
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_calls_per_response: Option<u32>,
}

/// Tool settings from the job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSettings {
    pub bash_timeout: Option<Duration>,
    pub bash_max_chars: Option<usize>,
    pub bash_max_lines: Option<usize>,
    /// The containment of commands (default `workspace-write`).
    pub bash_sandbox: crate::sandbox::SandboxMode,
    /// Whether commands may use the network; `None`: no.
    pub bash_network: Option<bool>,
    /// `network: [hosts]`: the hosts commands reach through cn-run's proxy (else none).
    pub bash_network_hosts: Vec<crate::sandbox::HostRule>,
    /// Fail the run when the kernel cannot enforce the sandbox (else warn).
    pub bash_require_sandbox: bool,
    /// Extra writable folders under the sandbox, as written (resolved against the workspace).
    pub bash_writable: Vec<String>,
    /// Credential locations given back to commands, as written.
    pub bash_readable: Vec<String>,
    /// Variable names (or `PREFIX*`) passed to commands besides the allow-list.
    pub bash_env: Vec<String>,
    /// What commands may do to the git folders (default read-only).
    pub bash_git: crate::sandbox::GitAccess,
    /// Memory, processes, temporary space and file size of the run's commands.
    pub bash_limits: crate::sandbox::Limits,
}

/// Where the run works.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceSpec {
    /// `None`: the current directory.
    pub path: Option<PathBuf>,
    /// Work in a fresh copy of `path`.
    pub copy: bool,
}
