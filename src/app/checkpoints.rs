//! Git checkpoints wired into a run: snapshot 0 when it starts (or the chain continued
//! when it resumes), one after every mutating tool call that changed the tree, the
//! run's diff.patch and diffstat at the end, and rollback when the job asks for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::checkpoint::{Checkpointer, GitCheckpointer};
use crate::events::{Emitter, Event};
use crate::redact::Redactor;
use crate::report::DiffStat;

/// The run's checkpointer, if the workspace is in a git repository with a commit.
pub(crate) struct Checkpoints {
    git: GitCheckpointer,
    emitter: Arc<Emitter>,
    /// Whether any call that may change files ran (else the diff is empty for sure).
    mutated: AtomicBool,
}

impl Checkpoints {
    /// Start (or, for a resumed run, continue) checkpointing; `None` when git cannot be used.
    /// The event to report (the start snapshot or a warning) is returned, not emitted: this runs before `run.started`.
    pub(crate) fn open(
        workspace: &Path,
        run_id: &str,
        out_dir: &Path,
        resume: bool,
        emitter: &Arc<Emitter>,
    ) -> (Option<Checkpoints>, Option<Event>) {
        let exclude = [out_dir.to_path_buf()];
        let opened = if resume {
            GitCheckpointer::resume(workspace, run_id, &exclude)
        } else {
            GitCheckpointer::start(workspace, run_id, &exclude)
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
                let checkpoints = Checkpoints {
                    git,
                    emitter: emitter.clone(),
                    mutated: AtomicBool::new(resume),
                };
                (Some(checkpoints), event)
            }
            Ok(Err(reason)) => (
                None,
                warn(format!("git checkpoints and diff are off: {reason}")),
            ),
            Err(e) => (None, warn(format!("git checkpoints and diff are off: {e}"))),
        }
    }

    /// Snapshot after a mutating call, if the tree changed.
    pub(crate) fn after_call(&self, turn: u32, call_id: &str, tool: &str) {
        self.mutated.store(true, Ordering::SeqCst);
        match self.git.checkpoint(&format!("{tool} {call_id}")) {
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
        std::iter::once(self.git.start_snapshot())
            .chain(self.git.checkpoints())
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect()
    }

    /// Write diff.patch (exact bytes) and return its stats, and whether it holds a secret.
    pub(crate) fn write_diff(
        &self,
        out_dir: &Path,
        redactor: &Redactor,
    ) -> Option<(PathBuf, DiffStat, bool)> {
        match self.git.diff_since_start() {
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
        self.git.diff_since_start().ok().map(|(p, _)| p)
    }

    /// Put the workspace back to the start (git.rollback_on_failure).
    pub(crate) fn rollback_to_start(&self, workspace: &Path) {
        let message = match crate::checkpoint::rollback(workspace, self.git.run_id(), None) {
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
