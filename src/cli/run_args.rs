//! The flags of `cn-run run` (and of `cn-run JOB…`): what to run, where its records go, the
//! settings shared with `explain`, and the foreign flags other agents' CLIs take, refused
//! with what to say instead.

use std::path::PathBuf;

use clap::Args;

use super::{Format, Isolate, Switch};
use crate::config::Settings;

#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// Job files to run.
    pub jobs: Vec<PathBuf>,
    /// Run an ad-hoc job with this prompt instead of a job file (`-` reads it from stdin).
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// What to print on stdout (`--output-format`, as `claude -p` spells it, works too).
    #[arg(long, alias = "output-format", value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print one event per line (`--format stream-json`), as `codex exec --json` does.
    #[arg(long)]
    pub json: bool,
    /// Output folder of the run (default .cn-run/<run-id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the JUnit report here (one testsuite per job).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Whether each run folder gets report.html, the run as one self-contained page
    /// (default: the job's `outputs.html`, else on).
    #[arg(long, value_enum, value_name = "on|off")]
    pub html: Option<Switch>,
    /// Run up to N jobs at the same time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub parallel: usize,
    /// Give each run its own git worktree (`worktree`, the default with more than one job)
    /// or run in the workspace itself (`none`).
    #[arg(long, value_enum)]
    pub isolate: Option<Isolate>,
    /// Continue an earlier run (`latest` or a run id) where it stopped.
    #[arg(long, value_name = "RUN")]
    pub resume: Option<String>,
    /// Continue the latest run (`--resume latest`), as `claude -p --continue` does.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// With `--resume`: run the deferred call ID (its `tool_use_id` in result.json's
    /// `pending_approvals`) exactly as the model made it. Repeatable.
    #[arg(long, value_name = "ID", requires = "resume")]
    pub approve: Vec<String>,
    /// With `--resume`: refuse the deferred call ID; the model is told (with `--reason`).
    /// Repeatable.
    #[arg(long, value_name = "ID", requires = "resume")]
    pub deny: Vec<String>,
    /// Why the calls of `--deny` were refused (the model reads it).
    #[arg(long, value_name = "TEXT", requires = "deny")]
    pub reason: Option<String>,
    /// Flags of other agents' command lines that cn-run answers with its own.
    #[command(flatten)]
    pub foreign: ForeignFlags,
    /// How many jobs this call runs (set by the runner, not a flag): the GitHub step
    /// summary is shared between them, and step outputs are written once for all.
    #[arg(skip)]
    pub jobs_in_call: usize,
    /// The run-shaping flags (what a session keeps for `--resume`).
    #[command(flatten)]
    pub settings: Settings,
}

/// Flags people bring from `claude -p` and `codex exec` that mean something cn-run does
/// otherwise (or not at all): taken, hidden, only to say what to use instead.
#[derive(Debug, Clone, Default, Args)]
pub struct ForeignFlags {
    #[arg(long = "dangerously-skip-permissions", hide = true)]
    skip_permissions: bool,
    #[arg(long = "dangerously-bypass-approvals-and-sandbox", hide = true)]
    bypass_sandbox: bool,
    #[arg(
        long = "allowedTools",
        alias = "allowed-tools",
        hide = true,
        value_name = "TOOLS"
    )]
    allowed_tools: Option<String>,
    #[arg(
        long = "disallowedTools",
        alias = "disallowed-tools",
        hide = true,
        value_name = "TOOLS"
    )]
    disallowed_tools: Option<String>,
    #[arg(long = "permission-mode", hide = true, value_name = "MODE")]
    permission_mode: Option<String>,
    #[arg(long = "ask-for-approval", hide = true, value_name = "POLICY")]
    ask_for_approval: Option<String>,
    #[arg(long = "sandbox", hide = true, value_name = "MODE")]
    sandbox: Option<String>,
    #[arg(long = "output-last-message", hide = true, value_name = "FILE")]
    output_last_message: Option<String>,
}

impl ForeignFlags {
    /// What to use instead of the first foreign flag given, if any.
    pub fn pointer(&self) -> Option<String> {
        let said = [
            (
                self.skip_permissions,
                "--dangerously-skip-permissions",
                SKIP_ALL,
            ),
            (
                self.bypass_sandbox,
                "--dangerously-bypass-approvals-and-sandbox",
                SKIP_ALL,
            ),
            (
                self.allowed_tools.is_some(),
                "--allowedTools",
                "cn-run takes one pattern per --allow, e.g. --allow 'Bash(git *)' --allow Edit",
            ),
            (
                self.disallowed_tools.is_some(),
                "--disallowedTools",
                "cn-run takes one pattern per --exclude, e.g. --exclude Fetch",
            ),
            (
                self.permission_mode.is_some(),
                "--permission-mode",
                "cn-run's modes are flags: --auto (allow all but disabled commands), \
                 --readonly (plan mode), or neither (headless: the job's rules, on_ask decides)",
            ),
            (
                self.ask_for_approval.is_some(),
                "--ask-for-approval",
                "nobody answers in a headless run: --on-ask deny|fail|allow says what a call \
                 needing approval does",
            ),
            (
                self.sandbox.is_some(),
                "--sandbox",
                "containment is the job's tools.bash.sandbox (workspace-write, read-only or \
                 off); --readonly asks for a read-only one, --require-sandbox refuses to run \
                 without it",
            ),
            (
                self.output_last_message.is_some(),
                "--output-last-message",
                "the final answer is on stdout with --format text and in result.json's \
                 `result` (in the run folder; --out DIR chooses it)",
            ),
        ];
        said.into_iter()
            .find(|(given, _, _)| *given)
            .map(|(_, flag, what)| format!("{flag} is not a cn-run flag: {what}"))
    }
}

/// What cn-run says to a flag that would turn every check off.
const SKIP_ALL: &str = "no switch turns every check off. --auto allows every call the Bash \
     evaluator does not disable, with commands still contained; allow more with \
     --allow PATTERN or the job's permissions.allow (README: Safety)";

impl RunArgs {
    /// The flags as cn-run's own: `--json`, `--continue` and `--full-auto` said the cn-run
    /// way; a foreign flag is refused with what to use instead.
    pub fn normalized(mut self) -> Result<RunArgs, String> {
        if let Some(pointer) = self.foreign.pointer() {
            return Err(pointer);
        }
        if self.json {
            self.format = Format::StreamJson;
        }
        if self.continue_latest {
            self.resume = Some("latest".to_owned());
        }
        self.settings = self.settings.as_given();
        Ok(self)
    }
}
