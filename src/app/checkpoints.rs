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
    opening: Mutex<Option<JoinHandle<Opened>>>,
    emitter: Arc<Emitter>,
    /// Whether any call that may change files ran (else the diff is empty for sure).
    mutated: AtomicBool,
}

impl Checkpoints {
    /// Start (or, for a resumed run, continue) checkpointing on another thread. Its
    /// event is emitted when it is first waited for, which is after `run.started`.
    /// A new run's git status (for the system prompt) is sent to `status` on the way;
    /// when it is not (no usable repository), the sender is dropped.
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
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".into())
            .spawn(move || open_git(&workspace, &run_id, &out_dir, resume, status));
        let checkpoints = Checkpoints {
            git: OnceLock::new(),
            opening: Mutex::new(None),
            emitter: emitter.clone(),
            mutated: AtomicBool::new(resume),
        };
        match opening {
            Ok(handle) => *checkpoints.lock_opening() = Some(handle),
            Err(e) => {
                let _ = checkpoints.git.set(None);
                emitter.emit(Event::Warning {
                    message: format!(
                        "git checkpoints and diff are off: cannot start a thread: {e}"
                    ),
                });
            }
        }
        checkpoints
    }

    fn lock_opening(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<Opened>>> {
        self.opening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The checkpointer once its start snapshot is taken (waits for it), or `None` when
    /// checkpoints are off. Call before anything may change the workspace.
    pub(crate) fn ready(&self) -> Option<&GitCheckpointer> {
        self.git
            .get_or_init(|| {
                let handle = self.lock_opening().take()?;
                let (git, event) = handle.join().unwrap_or_else(|_| {
                    (
                        None,
                        Some(Event::Warning {
                            message: "git checkpoints and diff are off: the start snapshot failed"
                                .to_owned(),
                        }),
                    )
                });
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

/// Opens the checkpointer and takes (or, resuming, finds) the start snapshot.
fn open_git(
    workspace: &Path,
    run_id: &str,
    out_dir: &Path,
    resume: bool,
    status: Option<std::sync::mpsc::Sender<String>>,
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
