//! [`GitCheckpointer`]: the run's snapshot chain under `refs/cn-run/<run-id>/`.
//!
//! It holds one repository handle with a private index (see `snapshot.rs`) behind a
//! mutex, the start snapshot, and the checkpoints taken so far. A checkpoint is only
//! committed when the snapshot tree differs from the previous one.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use git2::{ErrorCode, Oid, Repository, Signature};

use super::error::{CheckpointError, Unavailable, git};
use super::snapshot::{self, Seen, Snapshotter};

/// What a new run's start snapshot is taken with: the run id, the paths never
/// snapshotted, the size limits.
pub(super) type Started = (String, Vec<PathBuf>, Limits);
use super::{
    Checkpoint, Checkpointer, DiffStat, Limits, Skipped, check_run_id, commit_message,
    recorded_limits, reference_name,
};

/// Snapshots one run's working tree into hidden git references.
pub struct GitCheckpointer {
    run_id: String,
    root: PathBuf,
    state: Mutex<State>,
}

struct State {
    snap: Snapshotter,
    start: Checkpoint,
    start_tree: Oid,
    last_commit: Oid,
    last_tree: Oid,
    taken: Vec<Checkpoint>,
}

impl GitCheckpointer {
    /// Takes snapshot 0 (`refs/cn-run/<run_id>/0`, parent HEAD) of the repository that
    /// contains `workspace`. `Ok(Err(reason))` when there is nothing to snapshot into:
    /// not a git repository, a bare one, or one without a commit yet; the caller says so
    /// once and runs without checkpoints. `exclude` lists paths (absolute or relative to
    /// `workspace`) never snapshotted, such as the run's own output folder.
    pub fn start(
        workspace: &Path,
        run_id: &str,
        exclude: &[PathBuf],
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        Self::start_with(workspace, run_id, exclude, Limits::default())
    }

    /// As [`start`](Self::start), with size limits other than the defaults.
    pub fn start_with(
        workspace: &Path,
        run_id: &str,
        exclude: &[PathBuf],
        limits: Limits,
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        check_run_id(run_id)?;
        Self::start_observed(workspace, |_| {
            Some((run_id.to_owned(), exclude.to_vec(), limits))
        })
    }

    /// As [`start`](Self::start) for a run that has no id yet: `observe` is called with
    /// the repository (its index a private copy, with fresh stat data) before anything
    /// is written — the run takes the system prompt's git status there — and returns
    /// the run id, the paths to exclude and the size limits once the run has started. When it returns
    /// `None`, no snapshot is taken (`Ok(Err(reason))`) and nothing is left in the repository.
    pub fn start_observed(
        workspace: &Path,
        observe: impl FnOnce(&git2::Repository) -> Option<(String, Vec<PathBuf>, Limits)>,
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        Self::start_adjusted(workspace, observe, |_, tree| Ok(tree))
    }

    /// As [`start_observed`](Self::start_observed); `adjust` turns the walked start tree
    /// into the one committed (files captured before a tool wrote them, `prior.rs`).
    pub(super) fn start_adjusted(
        workspace: &Path,
        observe: impl FnOnce(&git2::Repository) -> Option<(String, Vec<PathBuf>, Limits)>,
        adjust: impl FnOnce(&mut Snapshotter, Oid) -> Result<Oid, CheckpointError>,
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        Self::start_seeded(workspace, |repo| Some((observe(repo)?, None)), adjust)
    }

    /// As [`start_adjusted`](Self::start_adjusted); `observe` may also give what the run's
    /// git status found changed, and then the start snapshot reads only that (no scan of
    /// every file and folder: see `early.rs`).
    pub(super) fn start_seeded(
        workspace: &Path,
        observe: impl FnOnce(&git2::Repository) -> Option<(Started, Option<Seen>)>,
        adjust: impl FnOnce(&mut Snapshotter, Oid) -> Result<Oid, CheckpointError>,
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        let repo = match snapshot::open_repo(workspace)? {
            Ok(repo) => repo,
            Err(reason) => return Ok(Err(reason)),
        };
        let head = match repo.head().and_then(|h| h.peel_to_commit()) {
            Ok(commit) => commit.id(),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(Err(Unavailable::NoCommit(workspace.to_path_buf())));
            }
            Err(source) => {
                return Err(CheckpointError::Git {
                    action: "resolve HEAD",
                    source,
                });
            }
        };
        let root = snapshot::workdir(&repo)?;
        let head_tree = repo.find_commit(head).map_err(git("read HEAD"))?.tree_id();
        let mut snap = Snapshotter::new(repo, Some(head_tree), Vec::new())?;
        let Some(((run_id, exclude, limits), seen)) = observe(snap.repo()) else {
            return Ok(Err(Unavailable::NotStarted));
        };
        let run_id = run_id.as_str();
        check_run_id(run_id)?;
        if snap
            .repo()
            .find_reference(&reference_name(run_id, 0))
            .is_ok()
        {
            return Err(CheckpointError::RunExists(run_id.to_string()));
        }
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        snap.set_exclude(snapshot::relative_prefixes(&root, &workspace, &exclude));
        snap.set_limits(limits);
        snap.scan.watch_folders();
        let started = std::time::Instant::now();
        let walked = match &seen {
            Some(seen) => snap.tree_from_status(seen)?,
            None => snap.tree()?,
        };
        let tree = adjust(&mut snap, walked)?;
        let commit = commit_snapshot(&snap, run_id, 0, "start", tree, head)?;
        super::timing("start", started);
        let start = Checkpoint {
            index: 0,
            reference: reference_name(run_id, 0),
            commit: commit.to_string(),
            label: "start".into(),
            files_changed: 0,
            skipped: snap.skipped(),
        };
        let state = State {
            snap,
            start,
            start_tree: tree,
            last_commit: commit,
            last_tree: tree,
            taken: Vec::new(),
        };
        Ok(Ok(Self {
            run_id: run_id.to_string(),
            root,
            state: Mutex::new(state),
        }))
    }

    /// Continues the snapshot chain of an earlier process of the same run (a resumed
    /// run): the start stays snapshot 0, numbering goes on after the last reference.
    /// `Ok(Err(reason))` as for [`start`](Self::start), or when the run has no references.
    pub fn resume(
        workspace: &Path,
        run_id: &str,
        exclude: &[PathBuf],
    ) -> Result<Result<Self, Unavailable>, CheckpointError> {
        check_run_id(run_id)?;
        let repo = match snapshot::open_repo(workspace)? {
            Ok(repo) => repo,
            Err(reason) => return Ok(Err(reason)),
        };
        let read = {
            let commit_of = |index: u32| -> Option<git2::Commit<'_>> {
                repo.find_reference(&reference_name(run_id, index))
                    .ok()?
                    .peel_to_commit()
                    .ok()
            };
            match commit_of(0) {
                None => None,
                Some(first) => {
                    let mut taken = Vec::new();
                    let mut last = (first.id(), first.tree_id());
                    // In order, gaps allowed (a moved run adopts its start and its last).
                    for index in later_indices(&repo, run_id) {
                        let Some(c) = commit_of(index) else {
                            continue;
                        };
                        let label = c
                            .summary()
                            .ok()
                            .flatten()
                            .and_then(|s| s.split_once(": ").map(|(_, l)| l.to_owned()))
                            .unwrap_or_default();
                        taken.push(Checkpoint {
                            index,
                            reference: reference_name(run_id, index),
                            commit: c.id().to_string(),
                            label,
                            files_changed: 0,
                            skipped: Vec::new(),
                        });
                        last = (c.id(), c.tree_id());
                    }
                    Some(((first.id(), first.tree_id()), last, taken))
                }
            }
        };
        let Some(((start_commit, start_tree), (last_commit, last_tree), taken)) = read else {
            return Ok(Err(Unavailable::NoCheckpoints(run_id.to_owned())));
        };
        let head_tree = repo
            .head()
            .and_then(|h| h.peel_to_tree())
            .map(|t| t.id())
            .ok();
        let root = snapshot::workdir(&repo)?;
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        let exclude = snapshot::relative_prefixes(&root, &workspace, exclude);
        let limits = recorded_limits(&repo, start_commit);
        let mut snap = Snapshotter::new(repo, head_tree, exclude)?;
        snap.set_limits(limits);
        snap.scan.watch_folders();
        let start = Checkpoint {
            index: 0,
            reference: reference_name(run_id, 0),
            commit: start_commit.to_string(),
            label: "start".into(),
            files_changed: 0,
            skipped: Vec::new(),
        };
        let state = State {
            snap,
            start,
            start_tree,
            last_commit,
            last_tree,
            taken,
        };
        Ok(Ok(Self {
            run_id: run_id.to_string(),
            root,
            state: Mutex::new(state),
        }))
    }

    /// The run id the references are named after.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The root of the working tree being snapshotted (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The git directory the run started with (canonical).
    pub fn git_dir(&self) -> PathBuf {
        let dir = self.lock().snap.repo().path().to_path_buf();
        dir.canonicalize().unwrap_or(dir)
    }

    /// Snapshot 0, the state when the run started.
    pub fn start_snapshot(&self) -> Checkpoint {
        self.lock().start.clone()
    }

    /// The checkpoints taken after the start, oldest first.
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.lock().taken.clone()
    }

    /// The patch from the start state to the working tree as it is now (new, deleted and
    /// binary files and mode changes included), in the format `git apply` reads, and its
    /// size. Takes a fresh snapshot tree but commits nothing.
    pub fn diff_since_start(&self) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
        self.patch_since_start(true)
    }

    /// As [`diff_since_start`](Self::diff_since_start), with binary files' content only
    /// when `binary` (else they are named as changed); what was left out for its size is
    /// named at the top of the patch.
    pub fn patch_since_start(&self, binary: bool) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
        self.patch_now(binary, false)
    }

    /// As [`patch_since_start`](Self::patch_since_start), its scan stat'ing every file
    /// whatever the folder watch reported (the end of a run whose checkpoints trusted it:
    /// a change no watch reports is still in the diff).
    pub fn patch_checked(&self, binary: bool) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
        self.patch_now(binary, true)
    }

    fn patch_now(&self, binary: bool, check: bool) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
        let mut state = self.lock();
        if check {
            state.snap.scan.check_next();
        }
        let now = state.snap.tree()?;
        let skipped = state.snap.skipped();
        super::diff::patch(state.snap.repo(), state.start_tree, now, binary, &skipped)
    }

    /// Whether a checkpoint so far took what changed from the folder watch's events.
    pub fn used_events(&self) -> bool {
        self.lock().snap.scan.used_events()
    }

    /// As [`patch_since_start`](Self::patch_since_start), to the tree of the last
    /// snapshot instead of a fresh one: no scan, for a run whose every change was
    /// followed by a checkpoint. Scans when this process has taken no snapshot yet.
    pub fn patch_to_latest(&self, binary: bool) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
        let mut state = self.lock();
        let now = match state.snap.current {
            Some(tree) => tree,
            None => state.snap.tree()?,
        };
        let skipped = state.snap.skipped();
        super::diff::patch(state.snap.repo(), state.start_tree, now, binary, &skipped)
    }

    /// What is left out of the snapshots for its size, as of the last snapshot.
    pub fn skipped(&self) -> Vec<Skipped> {
        self.lock().snap.skipped()
    }

    /// How many files the snapshots left out because a contained command could not read
    /// them (cn-run runs as root), as of the last snapshot.
    pub fn unseen(&self) -> usize {
        self.lock().snap.unseen.len()
    }

    /// Snapshot after a tool that changed only `paths` (absolute, or relative to the
    /// working tree root): only they are read, and no other path is looked at. `None`
    /// when the tree did not change.
    pub fn checkpoint_paths(
        &self,
        label: &str,
        paths: &[PathBuf],
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        let rel: Vec<String> = paths
            .iter()
            .filter_map(|p| {
                let full = self.root.join(p);
                let rel = full.strip_prefix(&self.root).ok()?;
                let rel = super::rel_path::from_os(rel.as_os_str());
                (!rel.is_empty() && !rel.split('/').any(|c| c == ".." || c == "." || c == ".git"))
                    .then(|| rel.into_owned())
            })
            .collect();
        let mut state = self.lock();
        let started = std::time::Instant::now();
        let tree = state.snap.tree_of(&rel)?;
        super::timing("paths_tree", started);
        self.commit_if_changed(&mut state, label, tree)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Checkpointer for GitCheckpointer {
    fn checkpoint(&self, label: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let mut state = self.lock();
        let tree = state.snap.tree()?;
        self.commit_if_changed(&mut state, label, tree)
    }
}

impl GitCheckpointer {
    fn commit_if_changed(
        &self,
        state: &mut State,
        label: &str,
        tree: Oid,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        if tree == state.last_tree {
            return Ok(None);
        }
        let files_changed = state.snap.files_between(state.last_tree, tree)?;
        // After the last one taken (a moved run's adopted checkpoints leave a gap).
        let index = state.taken.last().map_or(1, |c| c.index.saturating_add(1));
        let commit = commit_snapshot(
            &state.snap,
            &self.run_id,
            index,
            label,
            tree,
            state.last_commit,
        )?;
        let checkpoint = Checkpoint {
            index,
            reference: reference_name(&self.run_id, index),
            commit: commit.to_string(),
            label: label.to_string(),
            files_changed,
            skipped: state.snap.skipped(),
        };
        state.last_commit = commit;
        state.last_tree = tree;
        state.taken.push(checkpoint.clone());
        Ok(Some(checkpoint))
    }
}

/// The indices after 0 of run `run_id`'s references, in order.
fn later_indices(repo: &Repository, run_id: &str) -> Vec<u32> {
    let glob = format!("{}*", reference_name(run_id, 0).trim_end_matches('0'));
    let mut found: Vec<u32> = repo
        .references_glob(&glob)
        .map(|mut refs| {
            refs.names()
                .filter_map(Result::ok)
                .filter_map(|n| n.rsplit('/').next()?.parse().ok())
                .filter(|i| *i > 0)
                .collect()
        })
        .unwrap_or_default();
    found.sort_unstable();
    found
}

/// Commits `tree` with `parent` (no reference moves) and points
/// `refs/cn-run/<run_id>/<index>` at it; a failure says so when the cause is a git
/// directory that cannot be written.
fn commit_snapshot(
    snap: &Snapshotter,
    run_id: &str,
    index: u32,
    label: &str,
    tree: Oid,
    parent: Oid,
) -> Result<Oid, CheckpointError> {
    let written = (|| -> Result<Oid, CheckpointError> {
        let repo: &Repository = snap.repo();
        let tree = repo
            .find_tree(tree)
            .map_err(git("read the snapshot tree"))?;
        let parent = repo
            .find_commit(parent)
            .map_err(git("read the parent commit"))?;
        let who = Signature::now("cn-run", "cn-run@localhost").map_err(git("make a signature"))?;
        let message = if index == 0 {
            commit_message(run_id, index, label, snap.exclude(), Some(snap.limits()))
        } else {
            commit_message(run_id, index, label, &[], None)
        };
        let commit = repo
            .commit(None, &who, &who, &message, &tree, &[&parent])
            .map_err(git("write the snapshot commit"))?;
        let name = reference_name(run_id, index);
        repo.reference(&name, commit, false, "cn-run checkpoint")
            .map_err(git("create the checkpoint reference"))?;
        Ok(commit)
    })();
    written.map_err(|e| super::error::explained(snap.repo().path(), e))
}
