//! One job, start to finish, over its resolved [`RunConfig`]: prepare (place the run,
//! build its policy, tools, outputs and conversation), execute (the agent loop and the
//! checks, a panic caught here), finish (results, reports, session). result.json,
//! events.jsonl and session.jsonl are left behind on success, failure, timeout, interrupt
//! or a panic. A resumed run continues in the same folder with the recorded conversation.

pub(crate) mod adhoc;
pub(crate) mod attempts;
pub(crate) mod checkpoints;
pub(crate) mod continuation;
pub(crate) mod extensions;
pub(crate) mod fault;
pub(crate) mod finish;
pub(crate) mod git_trust;
pub(crate) mod origin;
pub(crate) mod outputs;
pub(crate) mod prepare;
pub(crate) mod prepare_parts;
pub(crate) mod resume_moved;
pub(crate) mod resume_open;
pub(crate) mod resume_trust;
pub(crate) mod run_files;
pub(crate) mod run_lock;
pub(crate) mod run_parts;
pub(crate) mod session_hooks;
pub(crate) mod setup;
pub(crate) mod start_error;
pub(crate) mod store_sync;
pub(crate) mod subagents;
pub(crate) mod uploads;
pub(crate) mod user_hooks;
pub(crate) mod workspace;

use std::path::PathBuf;

use futures_util::FutureExt;

use self::attempts::{AttemptsReport, run_attempts};
use self::checkpoints::Early;
use self::finish::{Finished, finish};
use self::prepare::{Prepared, prepare};
use self::run_parts::classify;
use self::start_error::StartError;
use crate::agent::{Agent, ContextWindow, Outcome, RunState};
use crate::config::RunConfig;
use crate::observability::LogHandle;
use crate::report::RunResult;
use crate::session::Session;

pub(crate) struct RunOptions<'a> {
    /// A new run's checkpointer opened before the runtime (see `app::early_checkpoints`),
    /// used when the run's workspace is the one it was opened on.
    pub early: std::sync::Mutex<Option<Early>>,
    pub log: &'a LogHandle,
    /// `worktree` when the run works in a throwaway worktree (reported in result.json).
    pub isolation: Option<&'a str>,
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

/// The agent loop and the checks; a panic inside becomes an internal error of the run
/// (exit 6), never a lost result.
async fn execute(
    config: &RunConfig,
    run: &Prepared,
    state: &mut RunState,
) -> (Outcome, AttemptsReport) {
    let job = &config.job;
    let mut agent = Agent {
        client: run.client.as_ref(),
        tools: &run.tools.registry,
        policy: &run.tools.policy,
        shared: run.shared.clone(),
        emitter: &run.emitter,
        redactor: &run.redactor,
        stop: run.stop.clone(),
        config: config.agent.clone(),
        system: run.system.clone(),
        hooks: &run.hooks,
        rules: run.conditional_rules.clone(),
        narrow: None,
        text_history: Default::default(),
        user_hooks: &run.user_hooks,
        window: Some(ContextWindow::new(
            &job.model.name,
            config.context_length,
            job.model.max_tokens.map(u64::from),
        )),
    };
    let attempts = async {
        match &run.tools.failure {
            Some(e) => (Outcome::Internal(e.clone()), AttemptsReport::default()),
            None => run_attempts(&mut agent, state, job, run.continuation.clone()).await,
        }
    };
    std::panic::AssertUnwindSafe(attempts)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            let why = format!("panic in the agent loop: {}", panic_message(&*panic));
            (Outcome::Internal(why), AttemptsReport::default())
        })
}

/// Stop what the run started, then write its outputs (`finish`). Signals are listened
/// to until the last file is written.
async fn conclude(
    config: &RunConfig,
    mut run: Prepared,
    state: &RunState,
    outcome: Outcome,
    report: AttemptsReport,
) -> RunResult {
    let store = run.store.take();
    run.shared.background().kill_all().await;
    run.shared.commands_done();
    if let Some(hub) = run.tools.hub.take() {
        hub.shutdown().await;
    }
    if let (false, Some(c)) = (report.checks.is_empty(), &run.checkpoints) {
        c.note_change();
    }
    // Before the diff, rollback and the workflow's next git command.
    self::git_trust::finish(run.git_guard.as_ref(), &run.emitter);
    run.user_hooks.session_end("other", &run.emitter).await;
    let (status, reason, limit) = classify(&outcome, config);
    let finished = Finished {
        outcome: &outcome,
        status,
        reason,
        limit,
        jobs_in_call: config.jobs_in_call,
    };
    let result = finish(&config.job, state, &mut run, finished).await;
    // After the run's last file: the store gets the folder whole (briefly, once a signal
    // has come: the runner's kill follows it).
    self::store_sync::finish(store, &run.signals.interrupt).await;
    run.signals.task.abort();
    run.stop.token().cancel();
    result
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "unknown panic".to_owned())
}
