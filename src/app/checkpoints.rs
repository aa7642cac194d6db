//! Git checkpoints wired into a run: snapshot 0 when it starts (or the chain continued
//! when it resumes), one after every mutating tool call that changed the tree, the
//! run's diff.patch and diffstat at the end, and rollback when the job asks for it.
//!
//! The start snapshot walks (and, in a fresh copy, hashes) the whole workspace. It runs
//! on its own thread while the first model request is in flight, and is waited for only
//! when something may change the tree (tool calls or checks about to run) or at the end.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use crate::checkpoint::{Checkpointer, GitCheckpointer};
use crate::events::{Emitter, Event};
use crate::redact::Redactor;
use crate::report::DiffStat;

/// What opening the checkpointer gave: the checkpointer (none when git cannot be used)
/// and the event to report (the start snapshot, or a warning).
type Opened = (Option<GitCheckpointer>, Option<Event>);

/// The run's checkpointer: being opened, then open (or off, with a warning).
pub(crate) struct Checkpoints {
    git: OnceLock<Option<GitCheckpointer>>,
    opening: Mutex<Option<std::io::Result<JoinHandle<Opened>>>>,
    /// Lets a new run's start snapshot go ahead once the run has started; dropped
    /// unsent (a set-up error), the snapshot is not taken and nothing is written to git.
    go: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    emitter: Arc<Emitter>,
    /// Whether any call that may change files ran (else the diff is empty for sure).
    mutated: AtomicBool,
}

impl Checkpoints {
    /// Start (or, for a resumed run, continue) checkpointing on another thread. Its
    /// event (or the warning that checkpoints are off) is emitted when it is first
    /// waited for, which is after `run.started`: the emitter may have no sink yet.
    /// A new run's git status (for the system prompt) is sent to `status` on the way;
    /// when it is not (no usable repository), the sender is dropped. The start snapshot
    /// itself waits for [`begin`](Self::begin).
    pub(crate) fn open(
        workspace: &Path,
        run_id: &str,
        out_dir: &Path,
        resume: bool,
        emitter: &Arc<Emitter>,
        status: Option<std::sync::mpsc::Sender<String>>,
    ) -> Checkpoints {
        let (workspace, run_id, out_dir) = (
            workspace.to_path_buf(),
            run_id.to_owned(),
            out_dir.to_path_buf(),
        );
        let (go, wait) = std::sync::mpsc::channel();
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".into())
            .spawn(move || open_git(&workspace, &run_id, &out_dir, resume, status, wait));
        Checkpoints {
            git: OnceLock::new(),
            opening: Mutex::new(Some(opening)),
            go: Mutex::new(Some(go)),
            emitter: emitter.clone(),
            mutated: AtomicBool::new(resume),
        }
    }

    fn lock_opening(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<std::io::Result<JoinHandle<Opened>>>> {
        self.opening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run has started: its start snapshot may be taken (on the checkpoint thread).
    pub(crate) fn begin(&self) {
        let go = self
            .go
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(go) = go {
            let _ = go.send(());
        }
    }

    /// The checkpointer once its start snapshot is taken (waits for it), or `None` when
    /// checkpoints are off. Call before anything may change the workspace.
    pub(crate) fn ready(&self) -> Option<&GitCheckpointer> {
        self.begin();
        self.git
            .get_or_init(|| {
                let off = |why: String| {
                    let message = format!("git checkpoints and diff are off: {why}");
                    (None, Some(Event::Warning { message }))
                };
                let (git, event) = match self.lock_opening().take()? {
                    Ok(handle) => handle
                        .join()
                        .unwrap_or_else(|_| off("the start snapshot failed".to_owned())),
                    Err(e) => off(format!("cannot start a thread: {e}")),
                };
                if let Some(event) = event {
                    self.emitter.emit(event);
                }
                git
            })
            .as_ref()
    }

    /// Something outside the tools (a check command) may have changed the workspace.
    pub(crate) fn note_change(&self) {
        self.mutated.store(true, Ordering::SeqCst);
    }

    /// Snapshot after a mutating call, if the tree changed.
    pub(crate) fn after_call(&self, turn: u32, call_id: &str, tool: &str) {
        self.mutated.store(true, Ordering::SeqCst);
        let Some(git) = self.ready() else {
            return;
        };
        match git.checkpoint(&format!("{tool} {call_id}")) {
            Ok(Some(c)) => self.emitter.emit(Event::CheckpointCreated {
                turn,
                index: c.index,
                reference: c.reference,
                commit: c.commit,
                call_id: Some(call_id.to_owned()),
            }),
            Ok(None) => {}
            Err(e) => self.emitter.emit(Event::Warning {
                message: format!("checkpoint failed: {e}"),
            }),
        }
    }

    /// Every snapshot so far (start first), for result.json and the session.
    pub(crate) fn list(&self) -> Vec<serde_json::Value> {
        let Some(git) = self.ready() else {
            return Vec::new();
        };
        std::iter::once(git.start_snapshot())
            .chain(git.checkpoints())
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect()
    }

    /// Write diff.patch (exact bytes) and return its stats, and whether it holds a secret.
    pub(crate) fn write_diff(
        &self,
        out_dir: &Path,
        redactor: &Redactor,
    ) -> Option<(PathBuf, DiffStat, bool)> {
        let git = self.ready()?;
        // Nothing ran that could change a file: the diff is empty without a tree walk.
        let diff = if self.mutated.load(Ordering::SeqCst) {
            git.diff_since_start()
        } else {
            Ok((Vec::new(), crate::checkpoint::DiffStat::default()))
        };
        match diff {
            Ok((patch, stat)) => {
                let path = out_dir.join("diff.patch");
                if let Err(e) = std::fs::write(&path, &patch) {
                    self.emitter.emit(Event::Warning {
                        message: format!("cannot write diff.patch: {e}"),
                    });
                    return None;
                }
                let secret = redactor.finds_secret(&String::from_utf8_lossy(&patch));
                if secret {
                    self.emitter.emit(Event::Warning {
                        message: "diff.patch contains the value of a secret (kept exact; review it before sharing)".to_owned(),
                    });
                }
                let stat = DiffStat {
                    files: stat.files,
                    insertions: stat.insertions,
                    deletions: stat.deletions,
                };
                Some((path, stat, secret))
            }
            Err(e) => {
                self.emitter.emit(Event::Warning {
                    message: format!("cannot compute the run's diff: {e}"),
                });
                None
            }
        }
    }

    /// The patch of the run so far (for interval uploads), without writing it.
    pub(crate) fn current_diff(&self) -> Option<Vec<u8>> {
        if !self.mutated.load(Ordering::SeqCst) {
            return Some(Vec::new());
        }
        self.ready()?.diff_since_start().ok().map(|(p, _)| p)
    }

    /// Put the workspace back to the start (git.rollback_on_failure).
    pub(crate) fn rollback_to_start(&self, workspace: &Path) {
        let Some(git) = self.ready() else {
            return;
        };
        let message = match crate::checkpoint::rollback(workspace, git.run_id(), None) {
            Ok(r) => format!(
                "rolled the workspace back to the start ({} files restored, {} removed)",
                r.restored.len(),
                r.removed.len()
            ),
            Err(e) => format!("rollback to the start failed: {e}"),
        };
        self.emitter.emit(Event::Warning { message });
    }
}

impl Drop for Checkpoints {
    /// A run that never started: the thread takes no snapshot (`go` is dropped unsent),
    /// and is waited for so it cannot be cut off halfway through writing to `.git`.
    fn drop(&mut self) {
        self.go
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Ok(handle)) = self.lock_opening().take() {
            let _ = handle.join();
        }
    }
}

/// Opens the checkpointer and takes (or, resuming, finds) the start snapshot; a new
/// run's snapshot only once `go` says the run has started.
fn open_git(
    workspace: &Path,
    run_id: &str,
    out_dir: &Path,
    resume: bool,
    status: Option<std::sync::mpsc::Sender<String>>,
    go: std::sync::mpsc::Receiver<()>,
) -> Opened {
    let exclude = [out_dir.to_path_buf()];
    let opened = if resume {
        GitCheckpointer::resume(workspace, run_id, &exclude)
    } else {
        GitCheckpointer::start_observed(workspace, run_id, &exclude, |repo| {
            if let Some(tx) = status {
                // Not written back (`false`): the first request waits for this status, and
                // saving the index here cost it ~0.3 ms; the snapshot that follows, off the
                // critical path, refreshes and saves the private index anyway.
                let _ = tx.send(crate::agent::status_text(repo, false));
            }
            go.recv().is_ok()
        })
    };
    let warn = |message: String| Some(Event::Warning { message });
    match opened {
        Ok(Ok(git)) => {
            let start = git.start_snapshot();
            let event = (!resume).then_some(Event::CheckpointCreated {
                turn: 0,
                index: start.index,
                reference: start.reference,
                commit: start.commit,
                call_id: None,
            });
            (Some(git), event)
        }
        Ok(Err(reason)) => (
            None,
            warn(format!("git checkpoints and diff are off: {reason}")),
        ),
        Err(e) => (None, warn(format!("git checkpoints and diff are off: {e}"))),
    }
}
