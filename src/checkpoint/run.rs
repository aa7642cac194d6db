//! A run's checkpoints: snapshot 0 before the run first changes anything (or the chain
//! continued when it resumes), one after every mutating tool call, the run's diff at the
//! end, and rollback when the job asks for it.
//!
//! Checkpoints are taken on a worker ([`Queue`]) off the tools' path: the next model
//! request never waits for one; the readiness gate ([`Checkpoints::ready`]) makes the
//! next call that may change files, a rollback and the end of the run wait for those
//! handed in before. A run that only answers takes no snapshot: it changed nothing, and
//! its diff is empty. What happens is reported through [`Notify`], in order.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use super::{Checkpoint, CheckpointError, DiffStat, GitCheckpointer, Limits, Queue, Skipped};

/// A patch (with its stat) from the checkpointer, or why there is none.
type Patched = Result<(Vec<u8>, DiffStat), CheckpointError>;

/// What the run's checkpointer reports, oldest first (the app makes events of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A snapshot: the start (turn 0, no call), or the one after call `call_id`.
    Created {
        turn: u32,
        call_id: Option<String>,
        checkpoint: Checkpoint,
    },
    /// Checkpoints are off, or one failed, or a rollback happened: one sentence.
    Warning(String),
}

/// Where notices go.
pub type Notify = Arc<dyn Fn(Notice) + Send + Sync>;

/// The job's `git:` settings the checkpointer uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    /// What is too big to snapshot.
    pub limits: Limits,
    /// Binary files' content in the patch.
    pub binary_patch: bool,
    /// Keep the checkpoints of this many runs (this one included).
    pub keep: Option<usize>,
}

/// What opening the checkpointer gave: the checkpointer (none when git cannot be used, or
/// the run never needed its start snapshot) and what to report (the start snapshot, or
/// why checkpoints are off).
pub(super) struct Opened {
    pub(super) git: Option<GitCheckpointer>,
    pub(super) notice: Option<Notice>,
    /// The repository was usable, but the run ran no tool and no check: nothing changed,
    /// so no snapshot was taken.
    pub(super) unchanged: bool,
}

impl Opened {
    /// Checkpoints are off, and why (reported once as a warning).
    pub(super) fn off(why: impl std::fmt::Display) -> Opened {
        Opened {
            git: None,
            notice: Some(Notice::Warning(format!(
                "git checkpoints and diff are off: {why}"
            ))),
            unchanged: false,
        }
    }
}

/// What a queued checkpoint is tagged with: the turn and the call it follows.
type Tag = (u32, String);

/// A checkpoint handed in while the start snapshot is still being taken: the label and
/// the files the call named (`None`: scan).
type Held = (Tag, String, Option<Vec<PathBuf>>);

/// The checkpointer as the run ends.
enum AtEnd<'a> {
    Open(&'a GitCheckpointer),
    /// Nothing ran that could change the workspace: no snapshot, an empty diff.
    Unchanged,
    Off,
}

/// What a new run's start snapshot waits for: the run has started, with this id, and
/// writes its outputs here (never snapshotted).
pub(super) struct Go {
    pub(super) run_id: String,
    pub(super) out_dir: PathBuf,
    pub(super) limits: Limits,
}

/// The run's checkpointer: being opened, then open (or off, with a warning).
pub struct Checkpoints {
    /// Where the tools' relative paths start.
    pub(super) workspace: PathBuf,
    pub(super) settings: Settings,
    /// Once open: the worker that takes checkpoints off the tools' path.
    pub(super) git: OnceLock<Option<Queue<Tag>>>,
    pub(super) opening: Mutex<Option<std::io::Result<JoinHandle<Opened>>>>,
    /// Lets a new run's start snapshot go ahead once the run has started; dropped
    /// unsent (a set-up error), the snapshot is not taken and nothing is written to git.
    pub(super) go: Mutex<Option<(std::sync::mpsc::Sender<Go>, Go)>>,
    pub(super) notify: Notify,
    /// Whether any call that may change files ran (else the diff is empty for sure).
    pub(super) mutated: AtomicBool,
    /// Whether files may have changed after their call's checkpoint (a check command, a
    /// background job, an MCP server): then the end of the run scans the tree again;
    /// else the last checkpoint's tree is the end state.
    pub(super) lasting: AtomicBool,
    /// Set when the run ended without needing its start snapshot (see [`Opened`]).
    pub(super) unchanged: AtomicBool,
    /// Set by a new run's thread once it has the repository open and the status sent,
    /// and only waits for the start signal.
    pub(super) waiting: Arc<AtomicBool>,
    /// A new run's captures of the files a tool is about to write (see `prior.rs`).
    pub(super) prior: Option<Arc<super::prior::Prior>>,
    /// Checkpoints handed in before the start snapshot was taken, in order: the worker
    /// gets them once it is (the call that hands one in does not wait for it).
    pub(super) held: Mutex<Vec<Held>>,
}

impl Checkpoints {
    /// Continue a resumed run's snapshot chain, on another thread. Its notice (or the
    /// warning that checkpoints are off) is given when it is first waited for. A run
    /// stopped before its start snapshot (which comes before anything may change) gets it
    /// now: its workspace is still as the run found it, and its diff is then complete.
    pub fn resume(
        workspace: &Path,
        run_id: &str,
        out_dir: &Path,
        settings: Settings,
        notify: Notify,
    ) -> Checkpoints {
        let (ws, run_id, out_dir) = (
            workspace.to_path_buf(),
            run_id.to_owned(),
            out_dir.to_path_buf(),
        );
        // Files a tool wrote before the killed run's start snapshot was committed: put
        // back in it as they were captured, and the end of the run scans for their change.
        let captured = super::prior::recorded(&out_dir);
        let rescan = !captured.is_empty();
        let opening = std::thread::Builder::new()
            .name("cn-run-checkpoint".into())
            .spawn(move || {
                let exclude = [out_dir];
                match GitCheckpointer::resume(&ws, &run_id, &exclude) {
                    Ok(Err(super::Unavailable::NoCheckpoints(_))) => {
                        let started = GitCheckpointer::start_adjusted(
                            &ws,
                            |_| Some((run_id.clone(), exclude.to_vec(), settings.limits)),
                            |snap, tree| snap.with_prior(tree, &captured),
                        );
                        super::prior::forget(&exclude[0]);
                        super::early::outcome(started, true)
                    }
                    opened => {
                        super::prior::forget(&exclude[0]);
                        super::early::outcome(opened, false)
                    }
                }
            });
        Checkpoints {
            workspace: std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into()),
            settings,
            git: OnceLock::new(),
            opening: Mutex::new(Some(opening)),
            go: Mutex::new(None),
            notify,
            mutated: AtomicBool::new(true),
            lasting: AtomicBool::new(rescan),
            unchanged: AtomicBool::new(false),
            waiting: Arc::new(AtomicBool::new(false)),
            prior: None,
            held: Mutex::new(Vec::new()),
        }
    }

    /// Where the tools' relative paths start (canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    fn lock_opening(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<std::io::Result<JoinHandle<Opened>>>> {
        self.opening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run is about to change the workspace (a tool call is streaming in, or tools
    /// or checks are about to run): its start snapshot is taken now, on the checkpoint
    /// thread. A run that never gets here (an answer without tool calls) takes none.
    pub fn begin(&self) {
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
    pub fn ready(&self) -> bool {
        self.begin();
        self.settle()
    }

    /// Waits for the checkpoints handed in so far and reports them, oldest first.
    fn settle(&self) -> bool {
        let Some(queue) = self.opened() else {
            self.held().clear();
            return false;
        };
        self.hand_over(queue, None);
        let mut reported = false;
        for ((turn, call_id), result) in queue.settle() {
            reported |= self.report(turn, call_id, result);
        }
        reported
    }

    /// Reports one checkpoint (or a warning); true when there was a checkpoint.
    fn report(
        &self,
        turn: u32,
        call_id: String,
        result: Result<Option<Checkpoint>, CheckpointError>,
    ) -> bool {
        match result {
            Ok(Some(checkpoint)) => {
                (self.notify)(Notice::Created {
                    turn,
                    call_id: Some(call_id),
                    checkpoint,
                });
                true
            }
            Ok(None) => false,
            Err(e) => {
                // Its change is in no tree: the end of the run scans again.
                self.lasting.store(true, Ordering::SeqCst);
                (self.notify)(Notice::Warning(format!("checkpoint failed: {e}")));
                false
            }
        }
    }

    /// The checkpoint thread's outcome (waits for it); its notice is given once.
    fn opened(&self) -> Option<&Queue<Tag>> {
        self.git
            .get_or_init(|| {
                let opened = match self.lock_opening().take()? {
                    Ok(handle) => handle
                        .join()
                        .unwrap_or_else(|_| Opened::off("the start snapshot failed")),
                    Err(e) => Opened::off(format!("cannot start a thread: {e}")),
                };
                if let Some(notice) = opened.notice {
                    (self.notify)(notice);
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
        let started = std::time::Instant::now();
        self.settle();
        super::timing("end_settle", started);
        match self.opened() {
            Some(queue) => AtEnd::Open(queue.git()),
            None if self.unchanged.load(Ordering::SeqCst) => AtEnd::Unchanged,
            None => AtEnd::Off,
        }
    }

    /// Something outside the tools (a check command) may have changed the workspace.
    pub fn note_change(&self) {
        self.mutated.store(true, Ordering::SeqCst);
        self.lasting.store(true, Ordering::SeqCst);
    }

    /// A call started something that may go on changing files after its checkpoint (a
    /// background job, an MCP server's process): the end of the run scans again.
    pub fn note_lasting_change(&self) {
        self.lasting.store(true, Ordering::SeqCst);
    }

    /// Hands the checkpoint after a mutating call to the worker and returns at once: the
    /// next request does not wait for it, the next change does ([`ready`](Self::ready)).
    /// `touched`: the files the call changed when it names them all (only they are
    /// read); `None`: the checkpoint scans for what changed.
    pub fn after_call(
        &self,
        turn: u32,
        call_id: &str,
        label: String,
        touched: Option<Vec<PathBuf>>,
    ) {
        self.mutated.store(true, Ordering::SeqCst);
        self.begin();
        let job = ((turn, call_id.to_owned()), label, touched);
        if !self.open_now() {
            self.held().push(job);
            return;
        }
        if let Some(queue) = self.opened() {
            self.hand_over(queue, Some(job));
        }
    }

    /// A turn whose changes are all the files `paths` names (absolute): true when each
    /// was captured for the start snapshot still being taken, so the turn need not wait
    /// for it (see `prior.rs`); false when the caller must wait ([`ready`](Self::ready)).
    pub fn capture_before(&self, paths: &[PathBuf]) -> bool {
        self.begin();
        // Only the start snapshot is captured for: a checkpoint after a call is reported
        // before the next call starts, so that call waits for it.
        if !self.held().is_empty() {
            return false;
        }
        let captured = self.prior.as_ref().is_some_and(|p| p.capture(paths));
        captured && !self.open_now()
    }

    /// Whether the checkpoint thread is done opening (waiting for it costs nothing).
    fn open_now(&self) -> bool {
        self.git.get().is_some()
            || self
                .lock_opening()
                .as_ref()
                .is_none_or(|opening| !matches!(opening, Ok(h) if !h.is_finished()))
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands the held checkpoints, then `job`, to the worker, in order.
    fn hand_over(&self, queue: &Queue<Tag>, job: Option<Held>) {
        let mut held = self.held();
        for (tag, label, touched) in held.drain(..).chain(job) {
            queue.submit(tag, label, touched);
        }
    }

    /// Every snapshot so far (start first), for result.json and the session: after a
    /// change, or at the end (none when the run changed nothing).
    pub fn list(&self) -> Vec<Checkpoint> {
        let AtEnd::Open(git) = self.at_end() else {
            return Vec::new();
        };
        std::iter::once(git.start_snapshot())
            .chain(git.checkpoints())
            .collect()
    }

    /// The run's patch (binary content as the job asks) and its size, as the run ends;
    /// `None` when checkpoints are off. Empty, without a tree walk, when nothing ran that
    /// could change a file; from the last checkpoint's tree, without a scan, when every
    /// change was a tool call whose checkpoint was taken after it; from a scan that stats
    /// every file when a checkpoint took its changes from the folder watch (`watch.rs`).
    pub fn diff(&self) -> Option<Result<(Vec<u8>, DiffStat), CheckpointError>> {
        match self.at_end() {
            AtEnd::Off => None,
            AtEnd::Open(git) if self.mutated.load(Ordering::SeqCst) => {
                let started = std::time::Instant::now();
                let binary = self.settings.binary_patch;
                let diff = if self.lasting.load(Ordering::SeqCst) || git.used_events() {
                    git.patch_checked(binary)
                } else {
                    git.patch_to_latest(binary)
                };
                super::timing("end_diff", started);
                Some(diff)
            }
            AtEnd::Open(_) | AtEnd::Unchanged => Some(Ok((Vec::new(), DiffStat::default()))),
        }
    }

    /// What the snapshots left out for its size, and the bytes the run's checkpoints
    /// added to `.git`; `None` when the run took no snapshot.
    pub fn storage(&self) -> Option<(Vec<Skipped>, u64)> {
        let AtEnd::Open(git) = self.at_end() else {
            return None;
        };
        let started = std::time::Instant::now();
        let added = super::added_bytes(git.root(), git.run_id()).ok()?;
        super::timing("end_storage", started);
        let unseen = git.unseen();
        if unseen > 0 {
            (self.notify)(Notice::Warning(format!(
                "{unseen} workspace file(s) closed to contained commands (another user's, by \
                 their mode bits or a folder's above them) left out of the checkpoints and \
                 diff.patch: cn-run runs as root but stores only what its commands could read"
            )));
        }
        Some((git.skipped(), added))
    }

    /// `git.keep: N`: removes the checkpoints of all runs but the N newest (this one
    /// included), with the objects only they held.
    pub fn keep_runs(&self) {
        let Some(keep) = self.settings.keep else {
            return;
        };
        let AtEnd::Open(git) = self.at_end() else {
            return;
        };
        match super::storage::keep_newest_and(git.root(), keep, Some(git.run_id())) {
            Ok(r) if r.runs.is_empty() => {}
            Ok(r) => tracing::info!(
                "git.keep: removed the checkpoints of {} runs ({} objects, {} bytes)",
                r.runs.len(),
                r.objects_removed,
                r.bytes_freed
            ),
            Err(e) => (self.notify)(Notice::Warning(format!(
                "git.keep: cannot remove older checkpoints: {e}"
            ))),
        }
    }

    /// The patch of the run so far (for interval uploads).
    pub fn current_diff(&self) -> Option<Vec<u8>> {
        self.diff_by(GitCheckpointer::patch_since_start)
    }

    /// The patch of the run up to its last checkpoint (no scan once one was taken), for
    /// the run store's live copy.
    pub fn checkpointed_diff(&self) -> Option<Vec<u8>> {
        self.diff_by(GitCheckpointer::patch_to_latest)
    }

    /// The patch `patch` makes once the checkpointer is ready: empty when no tool changed
    /// anything, `None` when checkpoints are off or the patch failed.
    fn diff_by(&self, patch: fn(&GitCheckpointer, bool) -> Patched) -> Option<Vec<u8>> {
        if !self.mutated.load(Ordering::SeqCst) {
            return Some(Vec::new());
        }
        self.ready();
        let queue = self.opened()?;
        patch(queue.git(), self.settings.binary_patch)
            .ok()
            .map(|(p, _)| p)
    }

    /// Puts the workspace back to the start (`git.rollback_on_failure`).
    pub fn rollback_to_start(&self, _workspace: &Path) {
        let AtEnd::Open(git) = self.at_end() else {
            return;
        };
        // The repository and working tree the run started with, never rediscovered
        // from a workspace whose `.git` the run could have replaced.
        let rolled =
            super::rollback::rollback_pinned(&git.git_dir(), git.root(), git.run_id(), None);
        let message = match rolled {
            Ok(r) => format!(
                "rolled the workspace back to the start ({} files restored, {} removed)",
                r.restored.len(),
                r.removed.len()
            ),
            Err(e) => format!("rollback to the start failed: {e}"),
        };
        (self.notify)(Notice::Warning(message));
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
