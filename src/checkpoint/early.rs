//! A new run's checkpointer, opened before the run exists: the repository is opened and
//! the git status the system prompt needs is taken on the checkpoint thread from the
//! moment the workspace is known; the start snapshot, which walks (and, in a fresh copy,
//! hashes) the whole workspace, waits until the run is bound and about to change
//! something (see [`Checkpoints::begin`](super::Checkpoints::begin)).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use super::prior::Prior;
use super::run::{Checkpoints, Go, Notice, Notify, Opened, Settings};
use super::{CheckpointError, GitCheckpointer};

/// How the system prompt's git status is taken and shown (the agent's own).
#[derive(Clone, Copy)]
pub struct StatusOf {
    /// The options it is taken with (untracked folders are named whole).
    pub options: fn() -> git2::StatusOptions,
    /// Its text for the prompt.
    pub lines: fn(&git2::Statuses<'_>) -> String,
    /// The text when it cannot be taken.
    pub unavailable: &'static str,
}

/// The checkpointer before its run exists. Dropped unbound (the run did not start), it
/// writes nothing.
pub struct Early {
    workspace: PathBuf,
    waiting: Arc<AtomicBool>,
    status: Option<tokio::sync::oneshot::Receiver<String>>,
    go: Option<std::sync::mpsc::Sender<Go>>,
    opening: Option<std::io::Result<JoinHandle<Opened>>>,
    /// Files captured before a tool wrote them, for the start snapshot.
    prior: Arc<Prior>,
}

impl Early {
    /// Starts on `workspace` (a canonical path); `status` gives the prompt's git status.
    pub fn open(workspace: &Path, status: StatusOf) -> Early {
        let (status_tx, status_rx) = tokio::sync::oneshot::channel();
        let (go, wait) = std::sync::mpsc::channel();
        let ws = workspace.to_path_buf();
        let waiting = Arc::new(AtomicBool::new(false));
        let flag = waiting.clone();
        let prior = Arc::new(Prior::default());
        let captures = prior.clone();
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".to_owned())
            .spawn(move || open_new(&ws, (status, status_tx), &wait, &flag, &captures));
        Early {
            workspace: workspace.to_path_buf(),
            waiting,
            status: Some(status_rx),
            go: Some(go),
            opening: Some(opening),
            prior,
        }
    }

    /// The workspace it was opened on.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The checkpointer of run `run_id` (its snapshot taken after
    /// [`Checkpoints::begin`]), and the git status when it comes (closed unsent when
    /// there is no usable repository).
    pub fn bind(
        mut self,
        run_id: &str,
        out_dir: &Path,
        settings: Settings,
        notify: Notify,
    ) -> (Checkpoints, tokio::sync::oneshot::Receiver<String>) {
        let go = self.go.take().map(|tx| {
            let go = Go {
                run_id: run_id.to_owned(),
                out_dir: out_dir.to_path_buf(),
                limits: settings.limits,
            };
            (tx, go)
        });
        self.prior.bind(out_dir, settings.limits.max_file_bytes);
        let checkpoints = Checkpoints {
            prior: Some(self.prior.clone()),
            held: Mutex::new(Vec::new()),
            workspace: self.workspace.clone(),
            settings,
            git: OnceLock::new(),
            opening: Mutex::new(self.opening.take()),
            go: Mutex::new(go),
            notify,
            mutated: AtomicBool::new(false),
            lasting: AtomicBool::new(false),
            unchanged: AtomicBool::new(false),
            waiting: self.waiting.clone(),
        };
        let status = match self.status.take() {
            Some(status) => status,
            None => tokio::sync::oneshot::channel().1,
        };
        (checkpoints, status)
    }
}

impl Drop for Early {
    /// Never bound: the thread stops before writing anything; it is waited for so it
    /// cannot be cut off halfway through removing its private index.
    fn drop(&mut self) {
        self.go.take();
        if let Some(Ok(handle)) = self.opening.take() {
            let _ = handle.join();
        }
    }
}

/// A new run's checkpointer: the status for the system prompt, then (once the run has
/// started) the start snapshot, with the files captured before a tool wrote them.
fn open_new(
    workspace: &Path,
    (status_of, status): (StatusOf, tokio::sync::oneshot::Sender<String>),
    go: &std::sync::mpsc::Receiver<Go>,
    waiting: &AtomicBool,
    prior: &Prior,
) -> Opened {
    let mut unchanged = false;
    let observe = |repo: &git2::Repository| {
        prior.opened(repo);
        // The private index already has fresh stat data (refresh.rs).
        let (text, seen) = status_and_seen(repo, status_of);
        waiting.store(true, Ordering::SeqCst);
        let _ = status.send(text);
        let go = go.recv().ok();
        unchanged = go.is_none();
        go.map(|g| ((g.run_id, vec![g.out_dir], g.limits), seen))
    };
    let adjust = |snap: &mut super::snapshot::Snapshotter, tree| {
        let captured = prior.close();
        snap.with_prior(tree, &captured)
    };
    let opened = GitCheckpointer::start_seeded(workspace, observe, adjust);
    prior.close();
    if unchanged {
        return Opened {
            git: None,
            notice: None,
            unchanged: true,
        };
    }
    if matches!(opened, Ok(Ok(_))) {
        prior.committed();
    }
    outcome(opened, true)
}

/// The prompt's git status, and what it found changed in the working tree: the start
/// snapshot reads only that (`None` when the status could not be taken: it scans).
///
/// Why (issue 38): the status already looks at every file and folder; a start snapshot
/// that scanned them again when the first tool call came was, on 100,000 files, hundreds
/// of milliseconds that the second changing turn waited for (the checkpoint after the
/// first call is reported before the next call starts, and it needs the start). The
/// start snapshot is then the workspace as the status found it when the run started,
/// with the files a tool wrote before it was committed put back as captured (`prior.rs`).
fn status_and_seen(
    repo: &git2::Repository,
    status_of: StatusOf,
) -> (String, Option<super::snapshot::Seen>) {
    let statuses = repo.statuses(Some(&mut (status_of.options)()));
    let index = repo.index();
    match (statuses, index) {
        (Ok(statuses), Ok(index)) => {
            let seen = super::snapshot::Seen::of(&statuses, &index);
            ((status_of.lines)(&statuses), Some(seen))
        }
        (Ok(statuses), Err(_)) => ((status_of.lines)(&statuses), None),
        (Err(_), _) => (status_of.unavailable.to_owned(), None),
    }
}

/// The checkpointer and what to report: the new run's start snapshot, or why
/// checkpoints are off.
pub(super) fn outcome(
    opened: Result<Result<GitCheckpointer, super::Unavailable>, CheckpointError>,
    new_run: bool,
) -> Opened {
    match opened {
        Ok(Ok(git)) => {
            let notice = new_run.then(|| Notice::Created {
                turn: 0,
                call_id: None,
                checkpoint: git.start_snapshot(),
            });
            Opened {
                git: Some(git),
                notice,
                unchanged: false,
            }
        }
        Ok(Err(reason)) => Opened::off(reason),
        Err(e) => Opened::off(e),
    }
}

#[cfg(test)]
#[path = "early_tests.rs"]
mod tests;
