//! Git checkpoints wired into a run: snapshot 0 before the run first changes anything
//! (or the chain continued when it resumes), one after every mutating tool call that
//! changed the tree, the run's diff.patch and diffstat at the end, and rollback when the
//! job asks for it.
//!
//! The checkpoint thread opens the repository and takes the git status the system prompt
//! needs as soon as the workspace is known. The start snapshot, which walks (and, in a
//! fresh copy, hashes) the whole workspace, waits until the first tool call streams in
//! (or tools or checks are about to run), and is waited for only before something may
//! change the tree or at the end. A run that only answers takes no snapshot: it changed
//! nothing, and its diff is empty.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use crate::checkpoint::{GitCheckpointer, Queue};
use crate::events::{Emitter, Event};
use crate::redact::Redactor;
use crate::report::DiffStat;

/// What opening the checkpointer gave: the checkpointer (none when git cannot be used, or
/// the run never needed its start snapshot) and the event to report (the start
/// snapshot, or why checkpoints are off).
struct Opened {
    git: Option<GitCheckpointer>,
    event: Option<Event>,
    /// The repository was usable, but the run ran no tool and no check: nothing changed,
    /// so no snapshot was taken.
    unchanged: bool,
}

impl Opened {
    /// Checkpoints are off, and why (reported once as a warning).
    fn off(why: impl std::fmt::Display) -> Opened {
        Opened {
            git: None,
            event: Some(Event::Warning {
                message: format!("git checkpoints and diff are off: {why}"),
            }),
            unchanged: false,
        }
    }
}

/// What a queued checkpoint is tagged with: the turn and the call it follows.
type Tag = (u32, String);

/// The checkpointer as the run ends.
enum AtEnd<'a> {
    Open(&'a GitCheckpointer),
    /// Nothing ran that could change the workspace: no snapshot, an empty diff.
    Unchanged,
    Off,
}

/// What a new run's start snapshot waits for: the run has started, with this id, and
/// writes its outputs here (never snapshotted).
struct Go {
    run_id: String,
    out_dir: PathBuf,
    limits: crate::checkpoint::Limits,
}

/// A new run's checkpointer, opened before the run exists: it opens the repository and
/// takes the git status the system prompt needs on its own thread, from the moment the
/// workspace is known, then waits to be [bound](Early::bind) to a run. Dropped unbound
/// (the run did not start), it writes nothing.
pub(crate) struct Early {
    workspace: PathBuf,
    waiting: Arc<AtomicBool>,
    status: Option<tokio::sync::oneshot::Receiver<String>>,
    go: Option<std::sync::mpsc::Sender<Go>>,
    opening: Option<std::io::Result<JoinHandle<Opened>>>,
}

impl Early {
    /// Starts on `workspace` (a canonical path).
    pub(crate) fn open(workspace: &Path) -> Early {
        let (status_tx, status) = tokio::sync::oneshot::channel();
        let (go, wait) = std::sync::mpsc::channel();
        let ws = workspace.to_path_buf();
        let waiting = Arc::new(AtomicBool::new(false));
        let flag = waiting.clone();
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".to_owned())
            .spawn(move || open_new(&ws, status_tx, wait, &flag));
        Early {
            workspace: workspace.to_path_buf(),
            waiting,
            status: Some(status),
            go: Some(go),
            opening: Some(opening),
        }
    }

    /// The workspace it was opened on.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The checkpointer of run `run_id` (its snapshot taken after [`Checkpoints::begin`]),
    /// and the git status when it comes (closed unsent when there is no usable repository).
    pub(crate) fn bind(
        mut self,
        run_id: &str,
        out_dir: &Path,
        settings: &crate::job::GitSettings,
        emitter: &Arc<Emitter>,
    ) -> (Checkpoints, tokio::sync::oneshot::Receiver<String>) {
        let go = self.go.take().map(|tx| {
            let go = Go {
                run_id: run_id.to_owned(),
                out_dir: out_dir.to_path_buf(),
                limits: limits_of(settings),
            };
            (tx, go)
        });
        let checkpoints = Checkpoints {
            workspace: self.workspace.clone(),
            settings: settings.clone(),
            git: OnceLock::new(),
            opening: Mutex::new(self.opening.take()),
            go: Mutex::new(go),
            emitter: emitter.clone(),
            mutated: AtomicBool::new(false),
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

/// The run's checkpointer: being opened, then open (or off, with a warning).
pub(crate) struct Checkpoints {
    /// Where the tools' relative paths start.
    workspace: PathBuf,
    /// The job's `git:` settings (binary content in the patch, runs to keep).
    settings: crate::job::GitSettings,
    /// Once open: the worker that takes checkpoints off the tools' path.
    git: OnceLock<Option<Queue<Tag>>>,
    opening: Mutex<Option<std::io::Result<JoinHandle<Opened>>>>,
    /// Lets a new run's start snapshot go ahead once the run has started; dropped
    /// unsent (a set-up error), the snapshot is not taken and nothing is written to git.
    go: Mutex<Option<(std::sync::mpsc::Sender<Go>, Go)>>,
    emitter: Arc<Emitter>,
    /// Whether any call that may change files ran (else the diff is empty for sure).
    mutated: AtomicBool,
    /// Set when the run ended without needing its start snapshot (see [`Opened`]).
    unchanged: AtomicBool,
    /// Set by a new run's thread once it has the repository open and the status sent,
    /// and only waits for the start signal.
    waiting: Arc<AtomicBool>,
}

impl Checkpoints {
    /// Continue a resumed run's snapshot chain, on another thread. Its event (or the
    /// warning that checkpoints are off) is emitted when it is first waited for, which
    /// is after `run.started`: the emitter may have no sink yet.
    pub(crate) fn resume(
        workspace: &Path,
        run_id: &str,
        out_dir: &Path,
        settings: &crate::job::GitSettings,
        emitter: &Arc<Emitter>,
    ) -> Checkpoints {
        let workspace_path = workspace.to_path_buf();
        let (workspace, run_id, out_dir) = (
            workspace.to_path_buf(),
            run_id.to_owned(),
            out_dir.to_path_buf(),
        );
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".into())
            .spawn(move || {
                let opened = GitCheckpointer::resume(&workspace, &run_id, &[out_dir]);
                outcome(opened, false)
            });
        Checkpoints {
            workspace: std::fs::canonicalize(&workspace_path).unwrap_or(workspace_path),
            settings: settings.clone(),
            git: OnceLock::new(),
            opening: Mutex::new(Some(opening)),
            go: Mutex::new(None),
            emitter: emitter.clone(),
            mutated: AtomicBool::new(true),
            unchanged: AtomicBool::new(false),
            waiting: Arc::new(AtomicBool::new(false)),
        }
    }

    fn lock_opening(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<std::io::Result<JoinHandle<Opened>>>> {
        self.opening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run is about to change the workspace (a tool call is streaming in, or tools
    /// or checks are about to run): its start snapshot is taken now, on the checkpoint
    /// thread. A run that never gets here (an answer without tool calls) takes none.
    pub(crate) fn begin(&self) {
        if let Some((tx, go)) = self.take_go() {
            let _ = tx.send(go);
        }
    }

    /// The start signal, if not sent yet; dropping it unsent tells the thread to stop.
    fn take_go(&self) -> Option<(std::sync::mpsc::Sender<Go>, Go)> {
        self.go
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The readiness gate: waits for the start snapshot and every checkpoint handed in
    /// so far, and reports them in order. Call before anything may change the workspace.
    /// True when a checkpoint was reported (the session's list changed).
    pub(crate) fn ready(&self) -> bool {
        self.begin();
        self.settle()
    }

    /// Waits for the checkpoints handed in so far and emits their events, oldest first.
    fn settle(&self) -> bool {
        let Some(queue) = self.opened() else {
            return false;
        };
        let mut reported = false;
        for ((turn, call_id), result) in queue.settle() {
            reported |= self.report(turn, &call_id, result);
        }
        reported
    }

    /// Emits one checkpoint's event (or a warning); true when there was a checkpoint.
    fn report(
        &self,
        turn: u32,
        call_id: &str,
        result: Result<Option<crate::checkpoint::Checkpoint>, crate::checkpoint::CheckpointError>,
    ) -> bool {
        match result {
            Ok(Some(c)) => {
                self.emitter.emit(Event::CheckpointCreated {
                    turn,
                    index: c.index,
                    reference: c.reference,
                    commit: c.commit,
                    call_id: Some(call_id.to_owned()),
                    skipped: c.skipped,
                });
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.emitter.emit(Event::Warning {
                    message: format!("checkpoint failed: {e}"),
                });
                false
            }
        }
    }

    /// The checkpoint thread's outcome (waits for it); its event is emitted once.
    fn opened(&self) -> Option<&Queue<Tag>> {
        self.git
            .get_or_init(|| {
                let opened = match self.lock_opening().take()? {
                    Ok(handle) => handle
                        .join()
                        .unwrap_or_else(|_| Opened::off("the start snapshot failed")),
                    Err(e) => Opened::off(format!("cannot start a thread: {e}")),
                };
                if let Some(event) = opened.event {
                    self.emitter.emit(event);
                }
                self.unchanged.store(opened.unchanged, Ordering::SeqCst);
                opened.git.map(|git| Queue::new(Arc::new(git)))
            })
            .as_ref()
    }

    /// As the run ends: the checkpointer if the run took its start snapshot; a run that
    /// never began changing things takes none now (the thread is told to stop). When the
    /// thread was only waiting for the signal, the run does not wait for it to wind down
    /// (it writes nothing to git; it is joined when the checkpointer is dropped).
    fn at_end(&self) -> AtEnd<'_> {
        if self.take_go().is_some() && self.waiting.load(Ordering::SeqCst) {
            self.unchanged.store(true, Ordering::SeqCst);
        }
        if self.unchanged.load(Ordering::SeqCst) && self.git.get().is_none() {
            return AtEnd::Unchanged;
        }
        self.settle();
        match self.opened() {
            Some(queue) => AtEnd::Open(queue.git()),
            None if self.unchanged.load(Ordering::SeqCst) => AtEnd::Unchanged,
            None => AtEnd::Off,
        }
    }

    /// Something outside the tools (a check command) may have changed the workspace.
    pub(crate) fn note_change(&self) {
        self.mutated.store(true, Ordering::SeqCst);
    }

    /// Hands the checkpoint after a mutating call to the worker and returns at once: the
    /// next request does not wait for it, the next change does ([`ready`](Self::ready)).
    /// A Write, Edit or MultiEdit names the one file it changed, and only that file is
    /// read; any other tool's checkpoint scans for what changed.
    pub(crate) fn after_call(
        &self,
        turn: u32,
        call_id: &str,
        tool: &str,
        args: &serde_json::Value,
    ) {
        self.mutated.store(true, Ordering::SeqCst);
        self.begin();
        let Some(queue) = self.opened() else {
            return;
        };
        let touched = touched_file(&self.workspace, tool, args).map(|p| vec![p]);
        queue.submit(
            (turn, call_id.to_owned()),
            format!("{tool} {call_id}"),
            touched,
        );
    }

    /// Every snapshot so far (start first), for result.json and the session: after a
    /// change, or at the end (none when the run changed nothing).
    pub(crate) fn list(&self) -> Vec<serde_json::Value> {
        let AtEnd::Open(git) = self.at_end() else {
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
        // Nothing ran that could change a file: the diff is empty without a tree walk.
        let diff = match self.at_end() {
            AtEnd::Off => return None,
            AtEnd::Open(git) if self.mutated.load(Ordering::SeqCst) => {
                git.patch_since_start(self.settings.binary_patch)
            }
            AtEnd::Open(_) | AtEnd::Unchanged => {
                Ok((Vec::new(), crate::checkpoint::DiffStat::default()))
            }
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

    /// What the snapshots left out for its size, and the bytes the run's checkpoints
    /// added to `.git`; `None` when the run took no snapshot.
    pub(crate) fn storage(&self) -> Option<(Vec<crate::checkpoint::Skipped>, u64)> {
        let AtEnd::Open(git) = self.at_end() else {
            return None;
        };
        let added = crate::checkpoint::added_bytes(git.root(), git.run_id()).ok()?;
        Some((git.skipped(), added))
    }

    /// `git.keep: N`: removes the checkpoints of all runs but the N newest (this one
    /// included), with the objects only they held.
    pub(crate) fn keep_runs(&self) {
        let Some(keep) = self.settings.keep else {
            return;
        };
        let AtEnd::Open(git) = self.at_end() else {
            return;
        };
        match crate::checkpoint::keep_newest(git.root(), keep as usize) {
            Ok(r) if r.runs.is_empty() => {}
            Ok(r) => tracing::info!(
                "git.keep: removed the checkpoints of {} runs ({} objects, {} bytes)",
                r.runs.len(),
                r.objects_removed,
                r.bytes_freed
            ),
            Err(e) => self.emitter.emit(Event::Warning {
                message: format!("git.keep: cannot remove older checkpoints: {e}"),
            }),
        }
    }

    /// The patch of the run so far (for interval uploads), without writing it.
    pub(crate) fn current_diff(&self) -> Option<Vec<u8>> {
        if !self.mutated.load(Ordering::SeqCst) {
            return Some(Vec::new());
        }
        self.ready();
        let queue = self.opened()?;
        let binary = self.settings.binary_patch;
        queue.git().patch_since_start(binary).ok().map(|(p, _)| p)
    }

    /// Put the workspace back to the start (git.rollback_on_failure).
    pub(crate) fn rollback_to_start(&self, workspace: &Path) {
        let AtEnd::Open(git) = self.at_end() else {
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
        drop(self.take_go());
        if let Some(Ok(handle)) = self.lock_opening().take() {
            let _ = handle.join();
        }
    }
}

/// The one file a Write, Edit or MultiEdit call changed (as the tool resolves it,
/// symlinks followed); `None` for any other tool, or arguments without a path.
fn touched_file(workspace: &Path, tool: &str, args: &serde_json::Value) -> Option<PathBuf> {
    let key = match tool {
        "Write" => "filepath",
        "Edit" | "MultiEdit" => "file_path",
        _ => return None,
    };
    let raw = args.get(key)?.as_str()?;
    Some(crate::tools::resolve_in_workspace(workspace, raw).real)
}

/// The snapshot size limits a job asks for.
fn limits_of(settings: &crate::job::GitSettings) -> crate::checkpoint::Limits {
    crate::checkpoint::Limits {
        max_file_bytes: settings.max_file_bytes,
        max_dir_files: settings.max_dir_files,
    }
}

/// A new run's checkpointer: the status for the system prompt, then (once the run has
/// started) the start snapshot.
fn open_new(
    workspace: &Path,
    status: tokio::sync::oneshot::Sender<String>,
    go: std::sync::mpsc::Receiver<Go>,
    waiting: &AtomicBool,
) -> Opened {
    let mut unchanged = false;
    let opened = GitCheckpointer::start_observed(workspace, |repo| {
        // The private index already has fresh stat data (refresh.rs).
        let text = crate::agent::status_text(repo);
        waiting.store(true, Ordering::SeqCst);
        let _ = status.send(text);
        let go = go.recv().ok();
        unchanged = go.is_none();
        go.map(|g| (g.run_id, vec![g.out_dir], g.limits))
    });
    if unchanged {
        return Opened {
            git: None,
            event: None,
            unchanged: true,
        };
    }
    outcome(opened, true)
}

/// The checkpointer and the event to report: the new run's start snapshot, or why
/// checkpoints are off.
fn outcome(
    opened: Result<Result<GitCheckpointer, String>, crate::checkpoint::CheckpointError>,
    new_run: bool,
) -> Opened {
    match opened {
        Ok(Ok(git)) => {
            let start = git.start_snapshot();
            let event = new_run.then_some(Event::CheckpointCreated {
                turn: 0,
                index: start.index,
                reference: start.reference,
                commit: start.commit,
                call_id: None,
                skipped: start.skipped,
            });
            Opened {
                git: Some(git),
                event,
                unchanged: false,
            }
        }
        Ok(Err(reason)) => Opened::off(reason),
        Err(e) => Opened::off(e),
    }
}
