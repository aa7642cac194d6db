//! One job, start to finish, over its resolved [`RunConfig`], in numbered steps:
//!
//! 1. `prepare` (01) runs steps 2–7 and hands the agent loop what it needs:
//!    2. `place` — id, run folder (locked), workspace, checkpointer;
//!    3. `guard` — policy, containment, rules;
//!    4. `outputs` — every sink the events go to;
//!    5. `tools` — built-in, skills, MCP, subagents;
//!    6. `conversation` — prompt, history, session log, system prompt;
//!    7. `announce` — the events that open the run.
//! 8. `execute` — the agent loop and the checks (a panic caught);
//! 9. `conclude` — stop what the run started, classify the outcome;
//! 10. `finish` — results, reports, session (every file through `run_files`).
//!
//! Anything that fails before step 8 is a start error: nothing has run yet. result.json,
//! events.jsonl and session.jsonl are left behind on success, failure, timeout, interrupt
//! or a panic. A resumed run continues in the same folder with the recorded conversation.

// The steps, in the order a run takes them (the files are numbered so; a comment between
// each keeps rustfmt from sorting them).
// 1. the steps 2–7, in turn
#[path = "01_prepare.rs"]
pub(crate) mod prepare;
// 2. id, folder, workspace, checkpointer
#[path = "02_place.rs"]
pub(crate) mod place;
// 3. policy, containment, rules
#[path = "03_guard.rs"]
pub(crate) mod guard;
// 4. every sink the events go to
#[path = "04_outputs.rs"]
pub(crate) mod outputs;
// 5. built-in, skills, MCP, subagents
#[path = "05_tools.rs"]
pub(crate) mod tools;
// 6. prompt, history, session log, system prompt
#[path = "06_conversation.rs"]
pub(crate) mod conversation;
// 7. the events that open the run
#[path = "07_announce.rs"]
pub(crate) mod announce;
// 8. the agent loop and the checks
#[path = "08_execute.rs"]
pub(crate) mod execute;
// 9. stop what the run started; the outcome
#[path = "09_conclude.rs"]
pub(crate) mod conclude;
// 10. results, reports, session
#[path = "10_finish.rs"]
pub(crate) mod finish;

// What the steps use.
pub(crate) mod checkpoints;
pub(crate) mod continuation;
pub(crate) mod extensions;
pub(crate) mod fault;
pub(crate) mod file_outputs;
pub(crate) mod git_trust;
pub(crate) mod origin;
pub(crate) mod resume_moved;
pub(crate) mod resume_open;
pub(crate) mod resume_trust;
pub(crate) mod run_files;
pub(crate) mod run_lock;
pub(crate) mod session_hooks;
pub(crate) mod setup;
pub(crate) mod signals;
pub(crate) mod start_error;
pub(crate) mod store_sync;
pub(crate) mod subagents;
pub(crate) mod uploads;
pub(crate) mod user_hooks;
pub(crate) mod workspace;

use std::path::PathBuf;

use self::checkpoints::Early;
use self::conclude::conclude;
use self::execute::execute;
use self::prepare::prepare;
use self::start_error::StartError;
use crate::config::RunConfig;
use crate::observability::LogHandle;
use crate::report::RunResult;
use crate::session::Session;

pub(crate) struct RunOptions<'a> {
    /// A new run's checkpointer opened before the runtime (see `app::run_cmd::early_checkpoints`),
    /// used when the run's workspace is the one it was opened on.
    pub early: std::sync::Mutex<Option<Early>>,
    pub log: &'a LogHandle,
    /// The throwaway worktree a `--parallel` job works in (reported in result.json as its
    /// isolation): the run is placed there instead of its configuration's workspace.
    pub worktree: Option<&'a std::path::Path>,
}

impl RunOptions<'_> {
    /// How the run is isolated from the user's tree, as result.json says it.
    pub(crate) fn isolation(&self) -> Option<&'static str> {
        self.worktree.map(|_| "worktree")
    }
}

/// An earlier run to continue.
pub(crate) struct Resume {
    pub path: PathBuf,
    pub session: Session,
    /// Its folder's lock, taken before the session was read.
    pub lock: Option<self::run_lock::RunLock>,
    /// Its events so far (the tools' state and the checks are read from them).
    pub events: Vec<crate::events::Envelope>,
    /// A new instruction, added once the calls the last response left are answered.
    pub prompt: Option<String>,
    /// Where the run picks up after the agent's loop.
    pub continuation: self::continuation::Continuation,
    /// People's answers to deferred calls (`--approve ID`, `--deny ID`).
    pub approvals: std::collections::BTreeMap<String, crate::hooks::Approval>,
}

/// Run one job. `Err` means it could not start (exit 2, or 6 for its environment); every
/// started run returns its result, which is also in `<out>/result.json`.
pub(crate) async fn run_job(
    config: RunConfig,
    opts: &RunOptions<'_>,
    resume: Option<Resume>,
) -> Result<RunResult, StartError> {
    let (run, mut state) = prepare(&config, opts, resume).await?;
    let (outcome, report) = execute(&config, &run, &mut state).await;
    Ok(conclude(&config, run, &state, outcome, report).await)
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "unknown panic".to_owned())
}
