//! The tools the agent can call: one trait, [`Tool`], one file per tool, and the shared
//! run state they read and write (the read set, the checklist, background jobs, artifacts).
//!
//! Tool names and JSON parameters follow Continue's `cn` so prompts written for it carry
//! over. A tool failure the model can act on is a [`ToolError::RespondToModel`]: it goes back
//! as the tool result and never ends the run.

/// A built-in tool's catalogue row, named once beside its type:
/// `catalogued!(pub struct Bash => catalog::BASH);` declares the unit type and its row,
/// `catalogued!(Fetch => catalog::FETCH);` gives the row of a type declared with fields.
macro_rules! catalogued {
    ($vis:vis struct $name:ident => $row:path) => {
        $vis struct $name;
        $crate::tools::catalogued!($name => $row);
    };
    ($name:ident => $row:path) => {
        impl $crate::tools::Catalogued for $name {
            fn info(&self) -> Option<&'static $crate::catalog::ToolInfo> {
                Some(&$row)
            }
        }
    };
}
pub(crate) use catalogued;

mod background;
mod bash;
mod capability;
mod check_background_job;
mod checklist;
mod edit;
mod exit;
mod fetch;
mod fetch_dns;
mod fetch_guard;
mod fetch_text;
mod grant;
mod list;
mod local_addr;
mod multi_edit;
pub mod offer_limit;
mod output;
pub(crate) mod paths;
#[cfg(test)]
mod probe;
mod process;
mod read;
mod registry;
mod report_failure;
mod search;
mod subagent;
pub(crate) mod unseen;
mod upload_artifact;
pub(crate) mod view;
mod write;

pub use background::{BackgroundJobs, JobSnapshot, JobStatus, MAX_BACKGROUND_JOBS};
pub use bash::Bash;
pub use capability::{edit_tool_for, supports_multi_edit};
pub use check_background_job::CheckBackgroundJob;
pub use checklist::Checklist;
pub use edit::Edit;
pub use exit::Exit;
pub use fetch::{Fetch, FetchLimits};
pub use fetch_guard::{check_redirect, private_reason};
pub use grant::{Grant, Judged, Pin};
pub use list::List;
pub use multi_edit::MultiEdit;
pub use output::{TailBuffer, truncate_tail};
pub use paths::{ResolvedPath, is_sensitive_path, resolve_in_workspace};
pub use process::{CommandLimits, CommandOutcome, run_command, run_command_sandboxed};
pub use read::Read;
pub use registry::{ToolRegistry, builtin_tools};
pub use report_failure::ReportFailure;
pub use search::Search;
pub use subagent::{
    Spent, SubagentCall, SubagentError, SubagentReport, SubagentRunner, SubagentTool,
};
pub use upload_artifact::{ArtifactRecord, UploadArtifact};
pub use write::Write;
pub(crate) use write::path_tighten;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::{ToolClass, ToolInfo};
use crate::conversation::ToolSpec;
use crate::permissions::Tighten;
use crate::sandbox::SandboxPolicy;

/// What a tool call asks of the run besides its text result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// The agent asked to stop (the Exit tool): the run ends as failed, as in `cn`.
    Exit,
    /// The agent reported that it cannot do the task; the reason goes to result.json.
    ReportFailure(String),
}

/// A successful tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub control: Option<Control>,
    /// Images beside the text (an MCP server's image content); most tools return none.
    pub images: Vec<crate::conversation::ImagePart>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            control: None,
            images: Vec::new(),
        }
    }
}

/// A failed tool call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The model can fix this (bad path, no match, non-zero exit): it becomes the tool result.
    #[error("{0}")]
    RespondToModel(String),
    /// The environment is broken (disk full, cannot spawn a shell): the run stops, exit 6.
    #[error("{0}")]
    Fatal(String),
}

/// Output and time bounds for tools, from the job (defaults follow `cn`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolLimits {
    pub read_max_chars: usize,
    pub read_max_lines: usize,
    pub bash_max_chars: usize,
    pub bash_max_lines: usize,
    pub bash_default_timeout: Duration,
    pub bash_max_timeout: Duration,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            read_max_chars: 100_000,
            read_max_lines: 5_000,
            bash_max_chars: 50_000,
            bash_max_lines: 1_000,
            bash_default_timeout: Duration::from_secs(180),
            bash_max_timeout: Duration::from_secs(600),
        }
    }
}

/// State shared by every tool call of one run.
#[derive(Debug)]
pub struct ToolShared {
    /// The workspace root, canonicalised.
    pub workspace: PathBuf,
    /// The environment commands run with (the provider key removed).
    pub env: Vec<(String, String)>,
    pub cancel: CancellationToken,
    pub limits: ToolLimits,
    /// Where UploadArtifact copies files to.
    pub artifacts_dir: PathBuf,
    read_set: Mutex<HashSet<PathBuf>>,
    checklist: Mutex<Option<String>>,
    /// Commands Bash started with `run_in_background`.
    background: BackgroundJobs,
    /// Files UploadArtifact copied, in upload order.
    artifacts: Mutex<Vec<ArtifactRecord>>,
    /// The sandbox Bash commands and background jobs run in (default: none), perhaps
    /// still being set up (the first command waits for it).
    sandbox: crate::sandbox::Deferred,
    /// What the run may still spend (set by the loop before each batch of calls) and what
    /// nested agents spent (drained by the loop after it): subagents share the budget.
    budget: Mutex<(Option<crate::job::Limits>, Vec<subagent::Spent>)>,
    /// The run works on untrusted input (network tools need explicit rules).
    untrusted: bool,
    /// What the file tools keep away from (hidden credentials, the run's records, `.git`).
    view: view::View,
}

impl ToolShared {
    pub fn new(
        workspace: PathBuf,
        env: Vec<(String, String)>,
        cancel: CancellationToken,
        limits: ToolLimits,
        artifacts_dir: PathBuf,
    ) -> Self {
        let home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| PathBuf::from(v));
        let view = view::View::new(&workspace, home.as_deref());
        ToolShared {
            view,
            workspace,
            env,
            cancel,
            limits,
            artifacts_dir,
            read_set: Mutex::new(HashSet::new()),
            checklist: Mutex::new(None),
            background: BackgroundJobs::default(),
            artifacts: Mutex::new(Vec::new()),
            sandbox: crate::sandbox::Deferred::ready(
                SandboxPolicy::off(),
                crate::sandbox::Probe::off(),
            ),
            budget: Mutex::new((None, Vec::new())),
            untrusted: false,
        }
    }

    /// Give back the credential locations the job lists (`tools.bash.readable`) to the
    /// file tools, as the sandbox gives them back to commands.
    pub fn with_readable(mut self, readable: &[PathBuf]) -> Self {
        self.view.give_back(readable);
        self
    }

    /// The run's own folder: the file tools never write into it.
    pub fn with_run_dir(mut self, run_dir: &std::path::Path) -> Self {
        self.view.protect_records(&self.workspace, run_dir);
        self
    }

    /// What the file tools keep away from.
    pub(crate) fn view(&self) -> &view::View {
        &self.view
    }

    /// Mark the run as working on untrusted input.
    pub fn with_untrusted(mut self, untrusted: bool) -> Self {
        self.untrusted = untrusted;
        self
    }

    pub fn untrusted(&self) -> bool {
        self.untrusted
    }

    /// Set what the run may still spend (turns, tokens, cost, time).
    pub fn set_remaining(&self, remaining: crate::job::Limits) {
        self.budget.lock().unwrap_or_else(PoisonError::into_inner).0 = Some(remaining);
    }

    /// What the run may still spend, if the loop said.
    pub fn remaining(&self) -> Option<crate::job::Limits> {
        self.budget
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// Record what a nested agent spent; the loop adds it to the run's budget.
    pub fn record_spent(&self, spent: subagent::Spent) {
        self.budget
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .push(spent);
    }

    /// Take what nested agents spent since the last call.
    pub fn take_spent(&self) -> Vec<subagent::Spent> {
        std::mem::take(&mut self.budget.lock().unwrap_or_else(PoisonError::into_inner).1)
    }

    /// Run Bash commands and background jobs under `sandbox`.
    pub fn with_sandbox(self, sandbox: SandboxPolicy) -> Self {
        let probe = crate::sandbox::Probe::off();
        self.with_deferred_sandbox(crate::sandbox::Deferred::ready(sandbox, probe))
    }

    /// Run them under the run's sandbox, which the first of them waits for.
    pub fn with_deferred_sandbox(mut self, sandbox: crate::sandbox::Deferred) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The sandbox shell commands run in (waits while it is being set up).
    pub fn sandbox(&self) -> &SandboxPolicy {
        self.sandbox.policy()
    }

    /// The sandbox itself, to be set up when first needed (by hooks, which run commands too).
    pub fn sandbox_handle(&self) -> crate::sandbox::Deferred {
        self.sandbox.clone()
    }

    /// No command runs any more (the run ends): the sandbox is reported if it is set up by
    /// now; else its set-up stops, and a run that started no command never waited for it.
    pub fn commands_done(&self) {
        if self.sandbox.now().is_none() {
            self.sandbox.not_needed();
        }
    }

    /// Record that the model has seen this file (read-before-edit).
    pub fn mark_read(&self, real_path: PathBuf) {
        self.read_set
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(real_path);
    }

    pub fn was_read(&self, real_path: &std::path::Path) -> bool {
        self.read_set
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(real_path)
    }

    pub fn set_checklist(&self, text: String) {
        *self
            .checklist
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(text);
    }

    pub fn checklist(&self) -> Option<String> {
        self.checklist
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The run's background jobs; call [`BackgroundJobs::kill_all`] when the run ends.
    pub fn background(&self) -> &BackgroundJobs {
        &self.background
    }

    /// The files uploaded with UploadArtifact, for result.json.
    pub fn artifacts(&self) -> Vec<ArtifactRecord> {
        self.artifacts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Lock the artifact list (UploadArtifact checks the run's total and records under it).
    pub(crate) fn artifacts_mut(&self) -> std::sync::MutexGuard<'_, Vec<ArtifactRecord>> {
        self.artifacts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What one tool call sees.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub shared: Arc<ToolShared>,
    /// How many calls the model made in this turn; output caps are divided by it.
    pub parallel_calls: usize,
    pub call_id: String,
    /// What the call's check judged and lifted (the default lifts nothing).
    pub grant: Grant,
}

impl ToolContext {
    /// Runs `work` with the call's shared state and grant on the blocking pool (file
    /// system work must not hold up the runtime); a task that dies is a fatal error
    /// naming `what`.
    pub(crate) async fn blocking(
        &self,
        what: &'static str,
        work: impl FnOnce(&ToolShared, &Grant) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> Result<ToolOutput, ToolError> {
        let (shared, grant) = (Arc::clone(&self.shared), self.grant.clone());
        tokio::task::spawn_blocking(move || work(&shared, &grant))
            .await
            .map_err(|e| ToolError::Fatal(format!("{what} task failed: {e}")))?
    }

    /// The context of a call that runs with no objection lifted.
    pub fn new(shared: Arc<ToolShared>, parallel_calls: usize, call_id: impl Into<String>) -> Self {
        ToolContext {
            shared,
            parallel_calls,
            call_id: call_id.into(),
            grant: Grant::default(),
        }
    }
}

/// A tool's description in the catalogue. Built-in tools get theirs from
/// [`catalogued!`]; an MCP server's tool has none (`None`: it describes itself).
pub trait Catalogued {
    fn info(&self) -> Option<&'static ToolInfo> {
        None
    }
}

/// A tool the model can call. A built-in tool is its catalogue row
/// ([`Catalogued::info`]) and a body (`run`, and `judge` for tools that resolve
/// something); its name, schema and whether it changes files or sends its arguments out
/// come from the row. MCP tools and skills describe themselves.
#[async_trait::async_trait]
pub trait Tool: Catalogued + Send + Sync {
    fn name(&self) -> &str {
        self.info().map_or("", |i| i.name)
    }

    /// Name, description and parameter schema, as offered to the model.
    fn spec(&self) -> ToolSpec {
        match self.info() {
            Some(info) => info.spec(),
            None => ToolSpec {
                name: self.name().to_owned(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
            },
        }
    }

    /// Whether a call may change the workspace (a checkpoint follows it).
    fn is_mutating(&self) -> bool {
        self.info().is_some_and(ToolInfo::changes_files)
    }

    /// Whether the call's arguments leave the machine (a URL fetched, an MCP server's
    /// request): arguments carrying a registered secret, in any spelling, are refused.
    fn sends_out(&self) -> bool {
        self.info().is_some_and(|i| i.class == ToolClass::Fetches)
    }

    /// Tighten the permission verdict from the arguments (a write outside the workspace,
    /// a read of `.env`): the first half of [`Tool::judge`]. `None` leaves the static
    /// verdict alone.
    fn tighten(&self, args: &Value, shared: &ToolShared) -> Option<Tighten> {
        self.judge(args, shared).tighten
    }

    /// The tightening and what it was judged on (a real path, resolved addresses), pinned
    /// for the call's run ([`ToolContext::grant`]). Tools that object to some arguments
    /// override this; the default judges the path the catalogue's rule argument names
    /// (Read, Write, Edit, List, Search, …) and tightens nothing for any other tool.
    fn judge(&self, args: &Value, shared: &ToolShared) -> Judged {
        self.info().map_or_else(Judged::default, |info| {
            view::judge_rule_path(info, args, shared)
        })
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The string argument `name`, or an error the model can act on.
pub(crate) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ToolError::RespondToModel(format!(
            "Parameter \"{name}\" must be a string, got {other}"
        ))),
        None => Err(ToolError::RespondToModel(format!(
            "Required parameter \"{name}\" is missing"
        ))),
    }
}
