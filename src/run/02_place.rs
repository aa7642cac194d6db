//! Step 2 of a run: place it — its id, its folder (locked before anything is written
//! there), its workspace (the job's, or a copy made now), or the resumed run's own — and open
//! its checkpointer, whose git status the system prompt waits for.

use std::path::PathBuf;
use std::sync::Arc;

use super::checkpoints::{Checkpoints, Early};
use super::start_error::{RunError, StartError};
use crate::config::RunConfig;
use crate::events::Emitter;
use crate::run::{Resume, RunOptions};

/// The git status the checkpointer takes for the system prompt.
pub(crate) type StatusRx = tokio::sync::oneshot::Receiver<String>;

/// Where a run works and writes: new folders, or the resumed run's own.
pub(crate) struct Placed {
    pub run_id: String,
    pub out_dir: PathBuf,
    pub workspace: PathBuf,
    pub resumed: bool,
    /// The run folder's lock, held until the run has written its last file.
    pub lock: Option<super::run_lock::RunLock>,
    /// The run's trace (OpenTelemetry on, or the caller's `TRACEPARENT`).
    pub trace: Option<crate::telemetry::RunTrace>,
}

/// The run's id, folder and workspace: new ones (a copied workspace made now, or the
/// `--parallel` job's worktree), or the resumed run's own.
pub(crate) fn place(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    resume: Option<&mut Resume>,
) -> Result<Placed, StartError> {
    if let Some(r) = resume {
        let out_dir = r
            .path
            .parent()
            .map(std::path::Path::to_path_buf)
            .ok_or_else(|| {
                RunError::from(crate::session::SessionError::NoFolder {
                    path: r.path.clone(),
                })
            })?;
        return Ok(Placed {
            run_id: r.session.session_id.clone(),
            out_dir,
            workspace: PathBuf::from(&r.session.workspace),
            resumed: true,
            lock: r.lock.take(),
            trace: None,
        });
    }
    let run_id = new_run_id();
    let out_dir = super::outputs::output_dir(config.out(), &run_id)?;
    // Before anything is written there: a folder another run is writing stays its own.
    let lock = super::run_lock::RunLock::take(&out_dir, &format!("run {run_id}"))?;
    let workspace = if let Some(worktree) = opts.worktree {
        worktree.to_path_buf()
    } else if config.job().workspace.copy {
        let dest = out_dir.join("workspace");
        super::workspace::copy_workspace(config.workspace(), &dest).map_err(RunError::from)?;
        dest.canonicalize()
            .map_err(|e| RunError::run_folder(&dest, e))?
    } else {
        config.workspace().to_path_buf()
    };
    Ok(Placed {
        run_id,
        out_dir,
        workspace,
        resumed: false,
        lock: Some(lock),
        trace: None,
    })
}

/// A new run that stops before its first file: the folder cn-run made for it under
/// `.cn-run` goes again if it is still empty (a `workspace.copy` folder holds the copy and
/// stays; an `--out` folder is the user's and stays).
pub(crate) fn unplace(config: &RunConfig, placed: &Placed) {
    if !placed.resumed && config.out().is_none() {
        if let Some(lock) = &placed.lock {
            let _ = std::fs::remove_file(lock.path());
        }
        let _ = std::fs::remove_dir(&placed.out_dir);
    }
}

/// The run's checkpointer, if the job keeps checkpoints. The system prompt needs the git
/// status; a new run's checkpointer takes it on its own thread, started before the runtime
/// when the command line allowed (`early`), else now: the first request waits for it.
pub(crate) fn open_checkpoints(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    placed: &Placed,
    emitter: &Arc<Emitter>,
) -> (Option<Arc<Checkpoints>>, Option<StatusRx>) {
    let git = &config.job().git;
    let (ws, id, out) = (&placed.workspace, &placed.run_id, &placed.out_dir);
    let early = opts
        .early
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .filter(|e| !placed.resumed && e.workspace() == ws);
    match (git.checkpoints, placed.resumed) {
        (false, _) => (None, None),
        (true, true) => (
            Some(Arc::new(Checkpoints::resume(ws, id, out, git, emitter))),
            None,
        ),
        (true, false) => {
            let early = early.unwrap_or_else(|| Early::open(ws));
            let (checkpoints, status) = early.bind(id, out, git, emitter);
            (Some(Arc::new(checkpoints)), Some(status))
        }
    }
}

/// A new run id: sortable by time (UTC, like every timestamp we write; reading the
/// local zone would scan the tz database at start), unique enough to share a folder.
pub(crate) fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    format!(
        "{}-{:06x}",
        now.strftime("%Y%m%d-%H%M%S"),
        fastrand::u32(..0x100_0000)
    )
}
