//! The job file as written: raw serde types that mirror the YAML one to one.
//!
//! Unknown fields are rejected. `schemas/job.schema.json` is generated from these types, so
//! the schema editors see and the parser cn-run runs can never disagree. Validation that
//! needs more than types (templates, files, durations) happens in `resolve`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::permissions::Mode;
pub use crate::provider::ProviderKind;

/// A cn-run job: what the agent should do, with which model, under which policy and limits.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "cn-run job file")]
pub struct JobFile {
    /// Format version of the job file. Only 1 exists.
    #[serde(default = "one")]
    pub version: u32,
    /// Short name used in reports (default: the file name).
    pub name: Option<String>,
    pub description: Option<String>,
    pub model: ModelSection,
    /// The task. `{{ params.NAME }}` is replaced by a parameter's value. `-` reads it from stdin.
    pub prompt: String,
    /// Parameters that can be used as `{{ params.NAME }}` and set with `--param NAME=VALUE`.
    #[serde(default)]
    pub params: BTreeMap<String, ParamSpec>,
    /// Rules added to the system message: inline text, or `{file: PATH}` (relative to the job file).
    #[serde(default)]
    pub rules: Vec<RuleEntry>,
    #[serde(default)]
    pub permissions: PermissionsSection,
    #[serde(default)]
    pub limits: LimitsSection,
    #[serde(default)]
    pub tools: ToolsSection,
    /// Where the agent works. Default: the current directory.
    pub workspace: Option<WorkspaceSection>,
    /// Commands run after the agent stops; each is a JUnit testcase. A failing check's output
    /// goes back to the agent when `retry.max_attempts` allows.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
    #[serde(default)]
    pub retry: RetrySection,
    /// A JSON schema the final answer must satisfy (inline, or `{file: PATH}`).
    pub output_schema: Option<OutputSchemaSpec>,
    /// Files (paths or globs, relative to the workspace) collected into the run's
    /// `artifacts/` folder after the run and its checks.
    #[serde(default)]
    pub artifacts: Vec<String>,
    #[serde(default)]
    pub git: GitSection,
    /// Names of extra environment variables whose values are secrets to mask everywhere.
    #[serde(default)]
    pub redact: Vec<String>,
    /// Upload the (redacted) session snapshot and diff to a URL while the run goes.
    pub upload: Option<UploadSection>,
    /// Keep the run folder in a run store while the run goes and at its end, under the
    /// run's id: `s3://BUCKET/PREFIX`, `gs://…`, `az://…`, or a path. Credentials come from
    /// the environment (each cloud's standard chain), never from this file.
    pub store: Option<String>,
    /// MCP servers, started before the first turn; their tools are `mcp__<server>__<tool>`.
    #[serde(default)]
    pub mcp_servers: std::collections::BTreeMap<String, McpServerSection>,
    /// Paths (globs) whose content comes from an untrusted contributor, e.g. the files of a
    /// pull request. Setting it turns on untrusted mode (as `--untrusted` does): tool output
    /// is marked untrusted for the model, Fetch and network commands need an explicit allow
    /// rule, auto mode is off, and repository instructions are read from `base_ref`.
    #[serde(default)]
    pub untrusted_paths: Vec<String>,
    /// The trusted commit (branch, tag or sha) whose AGENTS.md, `.continue/rules` and
    /// `.continue/permissions.yaml` apply in untrusted mode (default: `origin/$GITHUB_BASE_REF`
    /// when set; otherwise none are applied).
    pub base_ref: Option<String>,
    /// Nested agents the main agent can hand a task to (the Subagent tool). They never get
    /// wider permissions than the run, and what they spend counts toward its limits.
    #[serde(default)]
    pub subagents: Vec<SubagentSection>,
    /// Extra folders of skills (`<dir>/<name>/SKILL.md`), relative to the job file.
    /// `.continue/skills/` and `.claude/skills/` in the workspace are always searched.
    #[serde(default)]
    pub skills: Vec<String>,
    /// When `cn-run schedule DIR` starts the job: a cron line read in UTC (`"0 3 * * 1"`),
    /// or `{cron, timezone, missed}`. Debian's cron dialect (README: Schedules). Also used by
    /// `cn-run export`.
    pub schedule: Option<ScheduleSection>,
    /// Which optional files the run folder gets.
    #[serde(default)]
    pub outputs: OutputsSection,
    /// OpenTelemetry of this job's runs, exported when the standard `OTEL_EXPORTER_OTLP_*`
    /// variables name a collector.
    #[serde(default)]
    pub telemetry: TelemetrySection,
    /// Commands run at points of the run, in Claude Code's hook format and protocol:
    /// `{PreToolUse: [{matcher: "Bash", hooks: [{type: command, command: ./check.sh}]}]}`.
    /// A hook may tighten the policy or answer an ask, never open an exclude.
    #[serde(default)]
    pub hooks: crate::hooks::HooksSection,
    /// Also run the hooks of the repository's settings files, found as Continue's `cn`
    /// finds them: `.claude/settings.json`, `.continue/settings.json` and their
    /// `settings.local.json` (trusted mode only: an untrusted run never runs a hook the
    /// repository defines).
    #[serde(default)]
    pub repo_hooks: bool,
}

/// The run folder's optional outputs (result.json, events.jsonl, session.jsonl and
/// junit.xml are always written).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputsSection {
    /// `report.html`: the run as one self-contained page (default true; `--html off|on`
    /// overrides it).
    pub html: Option<bool>,
}

/// What the job adds to the OpenTelemetry the environment configures.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySection {
    /// Put prompts, answers, tool arguments and tool output on the spans and logs (redacted
    /// and capped), as `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` does.
    #[serde(default)]
    pub capture_content: bool,
}

/// A cron schedule: the line alone (UTC), or with a time zone and a missed-run policy.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ScheduleSection {
    /// Five fields (minute hour day-of-month month day-of-week) as Debian's cron reads
    /// them: numbers, JAN-DEC and SUN-SAT, `*`, lists, ranges, steps; when either day field
    /// starts with `*` a day must match both, else either. Or `@hourly`, `@daily`
    /// (`@midnight`), `@weekly`, `@monthly`, `@yearly` (`@annually`). `L`, `W`, `#`, `?`
    /// and `+` are refused.
    Cron(String),
    Spec(ScheduleSpec),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    /// Five fields (minute hour day-of-month month day-of-week) in Debian's cron dialect,
    /// or an `@` alias.
    pub cron: String,
    /// IANA time zone the cron line is read in, e.g. `Europe/Berlin` (default `UTC`). On
    /// DST nights a line of fixed times runs each time once (a skipped one at the end of
    /// the gap); a line whose minute or hour starts with `*` follows elapsed time.
    pub timezone: Option<String>,
    /// What to do about runs missed while the scheduler was down (default `skip`); a run
    /// seen within 60 s of its time is on time.
    pub missed: Option<Missed>,
}

/// The missed-run policy of a schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Missed {
    /// Forget missed runs; wait for the next time on the schedule.
    #[default]
    Skip,
    /// If one or more runs were missed, run once at start-up, then follow the schedule.
    RunOnce,
}

/// One nested agent.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentSection {
    /// How the main agent names it (`subagent_name`).
    pub name: String,
    /// What it is for; the main agent sees this.
    pub description: String,
    /// Its instructions, added to the system message.
    pub system_prompt: String,
    /// A different model of the same provider (default: the job's model).
    pub model: Option<String>,
    /// Tool patterns it may use (`Read`, `Bash(git diff*)`); everything else is excluded for
    /// it. Either way it can never do more than the run's own policy allows.
    pub tools: Option<Vec<String>>,
    /// Its own turn limit (the run's remaining turns apply too).
    pub max_turns: Option<u32>,
}

/// One MCP server: a command speaking MCP on stdio, or a streamable-HTTP `url` (the older
/// HTTP+SSE transport is not spoken). One message from a server may be at most 16 MiB (one
/// JSON-RPC line on stdio, one response body or event over HTTP): a larger answer ends its
/// call at once with an error saying it was too large, and the server's other calls go on.
/// Only tools the server annotates `readOnlyHint: true` run without a rule that allows them.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerSection {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// The environment of a stdio server beyond PATH, HOME and the locale (it gets nothing
    /// else of cn-run's); a value `${NAME}` is read from cn-run's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    /// HTTP headers; `${NAME}` in a value is read from the environment.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A server that fails to start is a warning instead of a failed run (exit 6).
    #[serde(default)]
    pub optional: bool,
    /// Time to start and list tools (default 30s); an HTTP server that does not accept
    /// connections yet is retried until then.
    pub startup_timeout: Option<DurationSpec>,
    /// Time for one tool call without an answer or a progress notification (default 5m).
    pub call_timeout: Option<DurationSpec>,
}

/// A command that must succeed after the agent stops.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub name: String,
    /// Run with `bash -c` in the workspace.
    pub run: String,
    /// Default 10m.
    pub timeout: Option<DurationSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySection {
    /// Attempts in all (default 1: no retry). After a failed check the agent gets the
    /// failing output and tries again, in the same conversation.
    pub max_attempts: Option<u32>,
}

/// An output schema, inline or from a file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OutputSchemaSpec {
    File(SchemaFile),
    Inline(serde_json::Map<String, serde_json::Value>),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaFile {
    /// Path of a JSON (or YAML) schema, relative to the job file.
    pub file: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSection {
    /// Snapshot the workspace after every change to hidden refs (default true).
    pub checkpoints: Option<bool>,
    /// Restore the workspace to its start when the run fails.
    #[serde(default)]
    pub rollback_on_failure: bool,
    /// Untracked files larger than this are left out of the checkpoints and named (not
    /// shown) in diff.patch: bytes, or a size such as `10MB`/`512KiB` (units are powers of
    /// 1024). Default 10MB.
    pub max_file_size: Option<SizeValue>,
    /// Untracked folders with more files than this are left out whole. Default 10000.
    pub max_dir_files: Option<u64>,
    /// Put binary files' content into diff.patch as git binary patches (default false:
    /// a binary change is named without its content).
    #[serde(default)]
    pub binary_patch: bool,
    /// Keep the checkpoints of this many runs (this one included) in the repository;
    /// older runs' hidden refs, and the objects only they held, are removed when the run
    /// ends. Default: keep every run (`cn-run sessions prune` removes them).
    pub keep: Option<u32>,
}

/// A size: a number of bytes, or text with a unit (`10MB`, `512 KiB`, `1G`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SizeValue {
    Bytes(u64),
    Text(String),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadSection {
    /// A URL that accepts PUT (e.g. a presigned object URL). Prefer `url_env`.
    pub url: Option<String>,
    /// Name of an environment variable holding the URL.
    pub url_env: Option<String>,
    /// A second URL that accepts PUT, for diff.patch (secrets masked). Prefer `diff_url_env`.
    pub diff_url: Option<String>,
    /// Name of an environment variable holding the diff URL.
    pub diff_url_env: Option<String>,
    /// How often to upload while the run goes (default 30s); always once at the end.
    pub interval: Option<DurationSpec>,
    /// Where each collected artifact is PUT at the end: a URL with `{path}` (and
    /// optionally `{run_id}`), e.g. `https://store/runs/{run_id}/artifacts/{path}`.
    pub artifacts_url: Option<String>,
    /// Name of an environment variable holding `artifacts_url`.
    pub artifacts_url_env: Option<String>,
}

fn one() -> u32 {
    1
}

/// Which model answers, and how to reach it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub provider: ProviderKind,
    /// The model name sent to the provider (e.g. `gpt-4.1`, `claude-sonnet-4-5`).
    pub name: String,
    /// Base URL of the API (default per provider). For `openai`, any compatible endpoint.
    pub api_base: Option<String>,
    /// Name of the environment variable that holds the API key. The key itself never
    /// appears in a job file.
    pub api_key_env: Option<String>,
    /// Context window in tokens.
    pub context_length: Option<u64>,
    /// Maximum tokens per response.
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// For `provider: script`: the file of scripted assistant turns (relative to the job file).
    pub script: Option<String>,
    /// Extra HTTP headers; a value `${NAME}` is read from the environment.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Retries of failed model requests.
    pub retry: Option<ModelRetrySection>,
    /// Seconds without a byte from the provider before the request counts as stalled.
    pub idle_timeout: Option<DurationSpec>,
    /// The longest one model request may take, streaming included (default 10m); keep-alive
    /// comments do not extend it.
    pub request_timeout: Option<DurationSpec>,
    /// `native` (default): the provider's tool calling. `text`: tools described in the
    /// system message and called as `<tool>{json}</tool>`, for models without tool calling.
    pub tool_call_format: Option<ToolCallFormat>,
    /// Price per million tokens, overriding the built-in table (for cost and max_cost_usd).
    pub pricing: Option<crate::context::pricing::Price>,
    /// Ask an OpenAI-compatible server for usage in the stream (`stream_options`; default
    /// true). Set false for a server that refuses the field.
    pub stream_usage: Option<bool>,
    /// Anthropic extended thinking: `{budget_tokens: N}` (at least 1024, below max_tokens).
    pub thinking: Option<ThinkingSection>,
    /// For `provider: azure`: the deployment name (default: `name`).
    pub deployment: Option<String>,
    /// For `provider: azure`: the `api-version` query value (default 2024-10-21).
    pub api_version: Option<String>,
}

/// Extended thinking settings.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkingSection {
    /// `enabled` (default) or `disabled`, as in Anthropic's request.
    #[serde(rename = "type", default)]
    pub kind: Option<ThinkingKind>,
    /// Tokens the model may spend thinking before it answers.
    pub budget_tokens: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingKind {
    Enabled,
    Disabled,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallFormat {
    #[default]
    Native,
    Text,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelRetrySection {
    /// Retries after the first attempt (default 10).
    pub max_retries: Option<u32>,
    /// Delay before the first retry (default 1s); it grows 1.6× per retry, up to 30 s.
    pub initial_delay: Option<DurationSpec>,
}

/// A parameter of the job.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// Value used when `--param` does not set it. Without a default the parameter is required.
    pub default: Option<ScalarValue>,
    pub description: Option<String>,
}

/// A scalar YAML value (parameters are substituted as text).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ScalarValue {
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
}

impl ScalarValue {
    pub fn as_text(&self) -> String {
        match self {
            ScalarValue::String(s) => s.clone(),
            ScalarValue::Integer(i) => i.to_string(),
            ScalarValue::Float(f) => f.to_string(),
            ScalarValue::Bool(b) => b.to_string(),
        }
    }
}

/// One rule: inline text or a file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RuleEntry {
    Text(String),
    File(RuleFile),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Path of a markdown file, relative to the job file.
    pub file: String,
}

/// The permission policy of the job.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    /// `headless` (default), `auto`, `plan` (read-only) or `normal`.
    pub mode: Option<Mode>,
    /// Patterns such as `Read`, `mcp__github__*`, `Bash(cargo *)`, `Edit(src/**)`.
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    /// What a call that needs approval does when nobody can approve it.
    pub on_ask: Option<OnAsk>,
    /// A repo `permissions.yaml` in Continue's format (default: `.continue/permissions.yaml`
    /// in the workspace, if present). Relative to the workspace.
    pub file: Option<String>,
}

/// How a call whose permission is `ask` resolves in a headless run.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum OnAsk {
    /// The model gets a tool result that says which rule denied the call and how to allow it.
    #[default]
    Deny,
    /// The run stops with exit code 3.
    Fail,
    /// The call runs.
    Allow,
    /// The run stops with exit code 3 and the call pending in result.json; `cn-run
    /// --resume RUN --approve ID` runs exactly that call (`--deny ID` tells the model).
    Defer,
}

/// Limits that stop a run cleanly (exit 4) with its result written.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    /// Maximum model turns.
    pub max_turns: Option<u32>,
    /// Wall-clock limit for the whole run, e.g. `15m`, `90s`, or seconds.
    pub timeout: Option<DurationSpec>,
    /// Maximum total cost in US dollars.
    pub max_cost_usd: Option<f64>,
    /// Maximum total tokens (input + output) over the run.
    pub max_tokens: Option<u64>,
    /// Tool calls run from one model response (default 64); the rest get an error result.
    pub max_calls_per_response: Option<u32>,
}

/// Settings of individual tools.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsSection {
    #[serde(default)]
    pub bash: BashSection,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashSection {
    /// Default inactivity timeout of a command (default 180s, at most 600s).
    pub timeout: Option<DurationSpec>,
    /// Characters of output kept (the tail; default 50000).
    pub max_output_chars: Option<usize>,
    /// Lines of output kept (the tail; default 1000).
    pub max_output_lines: Option<usize>,
    /// Containment of commands (Bash, background jobs, checks) on Linux:
    /// `workspace-write` (default: the workspace writable, the rest read-only, private /tmp,
    /// credentials hidden, own PID namespace), `read-only` (the workspace read-only too) or
    /// `off` (no containment; warned about).
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// Whether commands may use the network (default false: a new, empty network
    /// namespace), or a list of hosts (`[github.com, "*.example.com", "host:8080"]`) they
    /// reach through cn-run's proxy and no other (an entry without a port: 80 and 443).
    pub network: Option<BashNetwork>,
    /// Fail the run when the whole containment profile cannot be enforced (default false:
    /// warn and run with what can be enforced).
    pub require_sandbox: Option<bool>,
    /// More folders commands may write under `sandbox: workspace-write` (absolute, `~/…`, or
    /// relative to the workspace), e.g. `~/.cargo` or `~/.cache` for builds.
    #[serde(default)]
    pub writable: Vec<String>,
    /// Credential locations commands may read after all (`~/.npmrc`, `~/.docker`, …).
    #[serde(default)]
    pub readable: Vec<String>,
    /// Environment variables passed to commands besides the allow-list (`NAME` or
    /// `PREFIX*`), read from cn-run's environment.
    #[serde(default)]
    pub env: Vec<String>,
    /// What contained commands may do to the repository's git folders: `read-only`
    /// (default: `.git`, pointer files, their git folders and nested repositories) or
    /// `commit` (objects, refs and the index writable; hooks, config and info still not).
    pub git: Option<crate::sandbox::GitAccess>,
    /// Bounds on the run's commands: `memory`, `processes`, `tmp`, `file_size`.
    pub limits: Option<super::bash_limits::BashLimits>,
}

/// `tools.bash.network`: `true`/`false`, or a list of hosts reached through cn-run's proxy.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum BashNetwork {
    Allowed(bool),
    Hosts(Vec<String>),
}

/// Where the agent works.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WorkspaceSection {
    /// A directory, relative to the job file.
    Path(String),
    Spec(WorkspaceSpec),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceSpec {
    /// A directory, relative to the job file.
    pub path: String,
    /// Run in a fresh copy of the directory (inside the run's output folder, as its own
    /// git repository), leaving the original untouched.
    #[serde(default)]
    pub copy: bool,
}

/// A duration: `15m`, `90s`, `1h30m`, or a number of seconds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum DurationSpec {
    Seconds(u64),
    Text(String),
}
