//! Several jobs in one call: up to `--parallel N` at a time, each in its own git worktree
//! (`--isolate worktree`, the default with more than one job) so concurrent runs never
//! share a dirty tree. The user's tree stays untouched; each run's changes are its
//! diff.patch and checkpoint refs. With `--out DIR` each job writes to `DIR/<job>`. The
//! exit code is the worst of the jobs'. Worktrees and branches that dead runs left behind
//! are removed first (`worktree_prune`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::FutureExt;
use tokio::sync::Semaphore;

use super::call_plan::CallPlan;
use crate::cli::Isolate;
use crate::config::RunConfig;
use crate::observability::LogHandle;
use crate::report::RunResult;
use crate::run::checkpoints::Early;
use crate::run::start_error::{RunError, StartError};
use crate::run::{self, RunOptions, panic_message};
use crate::worktree::RunWorktree;

/// Run `jobs`; `Err` for a job that could not start (printed; exit 2, or 6). `early`
/// is a lone job's checkpointer, opened before the runtime.
pub(crate) async fn run_all(
    mut jobs: Vec<RunConfig>,
    plan: &CallPlan,
    log: &LogHandle,
    mut early: Option<Early>,
) -> Vec<Result<RunResult, StartError>> {
    let isolate = plan.isolation(jobs.len());
    if isolate == Isolate::Worktree {
        prune_dead_runs(&jobs);
        // Its .gitignore before the first worktree goes there: none of the jobs' worktrees
        // may see another's (or a run folder) as a change of the user's tree.
        if let Err(e) = crate::run::outputs::cn_run_root() {
            tracing::warn!("cannot make {}: {e}", crate::run::outputs::ROOT);
        }
    }
    if jobs.len() == 1
        && let Some(config) = jobs.pop()
    {
        // A lone job runs on the thread that drives the runtime: handing it to a worker
        // thread costs a wake-up on another core before anything starts.
        let run = run_one(config, log.clone(), isolate, early);
        let result = std::panic::AssertUnwindSafe(run)
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| Err(RunError::Panic(panic_message(&*panic)).into()));
        return vec![result];
    }
    let permits = Arc::new(Semaphore::new(plan.parallel));
    let mut tasks = Vec::with_capacity(jobs.len());
    // Each job its own folder (shared files would overwrite and interleave) and the
    // number of jobs in the call: resolved into each config (`CallPlan::job_calls`).
    for config in jobs {
        // Several jobs share stderr: each job's lines make one group (report::progress).
        let log = LogHandle {
            shared: true,
            ..log.clone()
        };
        let permits = permits.clone();
        let early = early.take();
        tasks.push(tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            run_one(config, log, isolate, early).await
        }));
    }
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        results.push(
            task.await
                .unwrap_or_else(|e| Err(RunError::Panic(e.to_string()).into())),
        );
    }
    results
}

/// Several jobs with `--out DIR`: `DIR` (the call's summary.json and junit.xml, the jobs'
/// folders) is held for the call, as a run holds its folder; a second call on it is
/// refused before any job starts.
pub(crate) fn lock_call_folder(
    jobs: usize,
    out: Option<&Path>,
) -> Result<Option<crate::run::run_lock::RunLock>, RunError> {
    let Some(dir) = out.filter(|_| jobs > 1) else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir).map_err(|e| RunError::run_folder(dir, e))?;
    crate::run::run_lock::RunLock::take(dir, "a --parallel call").map(Some)
}

/// Removes the worktrees and branches runs that died left in the jobs' repositories.
fn prune_dead_runs(jobs: &[RunConfig]) {
    let mut seen = std::collections::HashSet::new();
    for config in jobs
        .iter()
        .filter(|c| seen.insert(c.workspace().to_path_buf()))
    {
        match crate::worktree_prune::prune_dead(config.workspace()) {
            Ok(removed) => {
                for branch in removed {
                    tracing::warn!(
                        "removed the worktree and branch {branch} of a cn-run run that is no longer running"
                    );
                }
            }
            Err(e) => tracing::warn!("cannot remove the worktrees of dead cn-run runs: {e}"),
        }
    }
}

async fn run_one(
    config: RunConfig,
    log: LogHandle,
    isolate: Isolate,
    early: Option<Early>,
) -> Result<RunResult, StartError> {
    let name = config.job().name.clone();
    let source = config.job().source.clone();
    let started = start(config, log, isolate, early, name.clone()).await;
    started.map_err(|e| e.for_job(&name, source.as_deref()))
}

/// One job: its worktree (if isolated), the run placed there, the worktree removed.
async fn start(
    config: RunConfig,
    log: LogHandle,
    isolate: Isolate,
    early: Option<Early>,
    name: String,
) -> Result<RunResult, StartError> {
    let worktree = if isolate == Isolate::Worktree && !config.job().workspace.copy {
        let base = config.workspace().to_path_buf();
        let id = crate::run::place::new_run_id();
        let dest = std::path::absolute(PathBuf::from(".cn-run/worktrees").join(&id))
            .map_err(|e| RunError::run_folder(Path::new(".cn-run/worktrees"), e))?;
        let wt = tokio::task::spawn_blocking(move || RunWorktree::create(&base, &dest, &id))
            .await
            .map_err(|e| RunError::Panic(e.to_string()))?
            .map_err(|source| RunError::Worktree { job: name, source })?;
        Some(wt)
    } else {
        None
    };
    let opts = RunOptions {
        early: std::sync::Mutex::new(early),
        log: &log,
        worktree: worktree.as_ref().map(|wt| wt.workspace.as_path()),
    };
    let result = run::run_job(config, &opts, None).await;
    drop(opts);
    if let Some(wt) = worktree {
        let root = wt.root.display().to_string();
        let removed = tokio::task::spawn_blocking(move || wt.remove()).await;
        if let Err(e) = removed
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
        {
            tracing::warn!("cannot remove the worktree {root}: {e}");
        }
    }
    result
}
