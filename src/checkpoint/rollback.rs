//! `cn-run rollback`: put the working tree back to a checkpoint of a run, and list runs.
//!
//! Rollback snapshots the tree as it is now (with the same private-index machinery as
//! checkpoints, so nothing of the user's git state moves), diffs that snapshot against
//! the chosen checkpoint, and applies the difference file by file: changed and deleted
//! files are rewritten from the checkpoint, files added since are removed. Files that
//! `.gitignore` ignores are never in a snapshot and stay as they are; so do paths the run
//! excluded (its own output folder) and submodules. `.gitignore` files are restored
//! first, so a file is kept when the restored rules ignore it — un-ignoring a file during
//! the run does not get it deleted by the rollback.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffOptions, FileMode, Oid, Repository};

use super::error::{CheckpointError, git};
use super::snapshot::{self, Snapshotter};
use super::{REF_ROOT, check_run_id, excluded_paths, restore};

/// What a rollback did, for the CLI to print.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RollbackReport {
    pub run_id: String,
    /// The checkpoint restored (0 = the start of the run).
    pub to: u32,
    /// Its commit id.
    pub commit: String,
    /// Files written back (changed or deleted since the checkpoint).
    pub restored: Vec<String>,
    /// Files removed (added since the checkpoint).
    pub removed: Vec<String>,
    /// Files that differ but were left alone: ignored by the restored `.gitignore`
    /// rules, or submodules.
    pub kept: Vec<String>,
}

/// Restores the working tree of the repository containing `workspace` to checkpoint
/// `to` of run `run_id` (`None`: the state when the run started). HEAD, the index,
/// branches and ignored files are left alone.
pub fn rollback(
    workspace: &Path,
    run_id: &str,
    to: Option<u32>,
) -> Result<RollbackReport, CheckpointError> {
    check_run_id(run_id)?;
    let repo = snapshot::open_repo(workspace)??;
    rollback_repo(repo, run_id, to)
}

/// As [`rollback`], in the repository recorded when the run started: `git_dir` (which
/// must still be a folder, not a `gitdir:` pointer put in its place) with the working
/// tree `root`, whatever `core.worktree` says now.
pub(crate) fn rollback_pinned(
    git_dir: &Path,
    root: &Path,
    run_id: &str,
    to: Option<u32>,
) -> Result<RollbackReport, CheckpointError> {
    check_run_id(run_id)?;
    let moved = || CheckpointError::Blocked {
        path: git_dir.display().to_string(),
        reason: "the repository's git directory is no longer the folder the run started with"
            .to_owned(),
    };
    if !git_dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Err(moved());
    }
    let flags = git2::RepositoryOpenFlags::NO_SEARCH | git2::RepositoryOpenFlags::NO_DOTGIT;
    let repo = Repository::open_ext(git_dir, flags, std::iter::empty::<&std::ffi::OsStr>())
        .map_err(git("open the repository"))?;
    repo.set_workdir(root, false)
        .map_err(git("pin the working tree"))?;
    rollback_repo(repo, run_id, to)
}

fn rollback_repo(
    repo: Repository,
    run_id: &str,
    to: Option<u32>,
) -> Result<RollbackReport, CheckpointError> {
    let snapshots = run_snapshots(&repo, run_id)?;
    let last = snapshots.keys().next_back().copied();
    let Some(last) = last else {
        return Err(CheckpointError::RunNotFound(run_id.to_string()));
    };
    let index = to.unwrap_or(0);
    let target = *snapshots
        .get(&index)
        .ok_or_else(|| CheckpointError::CheckpointNotFound {
            run_id: run_id.to_string(),
            index,
            last,
        })?;
    let exclude = recorded_exclusions(&repo, &snapshots)?;
    let target_tree = repo
        .find_commit(target)
        .map_err(git("read the checkpoint"))?
        .tree_id();
    let head_tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .ok()
        .map(|t| t.id());
    let root = snapshot::workdir(&repo)?;
    let limits = snapshots
        .get(&0)
        .map(|start| super::recorded_limits(&repo, *start))
        .unwrap_or_default();
    let mut snap = Snapshotter::new(repo, head_tree, exclude)?;
    // The same limits as the run's: what the run left out for its size is left alone.
    snap.set_limits(limits);
    let current = snap.tree()?;
    let mut report = RollbackReport {
        run_id: run_id.to_string(),
        to: index,
        commit: target.to_string(),
        restored: Vec::new(),
        removed: Vec::new(),
        kept: Vec::new(),
    };
    let plan = Plan::between(snap.repo(), current, target_tree)?;
    plan.apply(snap.repo(), &root, &mut report)?;
    Ok(report)
}

/// The paths the run excluded from its snapshots, as recorded in snapshot 0.
fn recorded_exclusions(
    repo: &Repository,
    snapshots: &BTreeMap<u32, Oid>,
) -> Result<Vec<String>, CheckpointError> {
    let Some(start) = snapshots.get(&0) else {
        return Ok(Vec::new());
    };
    let commit = repo.find_commit(*start).map_err(git("read snapshot 0"))?;
    Ok(excluded_paths(&String::from_utf8_lossy(
        commit.message_bytes(),
    )))
}

/// Every run with checkpoints in the repository containing `workspace`, oldest first,
/// with how many checkpoints it took after its start snapshot.
pub fn list_runs(workspace: &Path) -> Result<Vec<(String, u32)>, CheckpointError> {
    let repo = snapshot::open_repo(workspace)??;
    let mut runs: BTreeMap<String, (Option<Oid>, u32)> = BTreeMap::new();
    for (run, index, oid) in all_snapshots(&repo)? {
        let entry = runs.entry(run).or_insert((None, 0));
        if index == 0 {
            entry.0 = Some(oid);
        }
        entry.1 = entry.1.max(index);
    }
    let started = |oid: Option<Oid>| {
        oid.and_then(|o| repo.find_commit(o).ok())
            .map_or(i128::MAX, |c| super::started_nanos(&c))
    };
    let mut listed: Vec<(i128, String, u32)> = runs
        .into_iter()
        .map(|(run, (start, last))| (started(start), run, last))
        .collect();
    listed.sort();
    Ok(listed
        .into_iter()
        .map(|(_, run, last)| (run, last))
        .collect())
}

/// The snapshots of one run: checkpoint number → commit.
fn run_snapshots(repo: &Repository, run_id: &str) -> Result<BTreeMap<u32, Oid>, CheckpointError> {
    Ok(all_snapshots(repo)?
        .into_iter()
        .filter(|(run, _, _)| run == run_id)
        .map(|(_, index, oid)| (index, oid))
        .collect())
}

/// Every `refs/cn-run/<run>/<n>` reference as (run, n, commit).
fn all_snapshots(repo: &Repository) -> Result<Vec<(String, u32, Oid)>, CheckpointError> {
    let refs = repo.references().map_err(git("list references"))?;
    let mut found = Vec::new();
    for reference in refs {
        let reference = reference.map_err(git("read a reference"))?;
        let Ok(name) = reference.name() else { continue };
        let Some(rest) = name.strip_prefix(REF_ROOT) else {
            continue;
        };
        let Some((run, index)) = rest.split_once('/') else {
            continue;
        };
        if let (Ok(index), Some(oid)) = (index.parse::<u32>(), reference.target()) {
            found.push((run.to_string(), index, oid));
        }
    }
    Ok(found)
}

/// The file operations that turn the current snapshot into the target one.
struct Plan {
    /// Paths present now but not in the target.
    remove: Vec<PathBuf>,
    /// Paths to (re)write from the target: path, mode, blob.
    write: Vec<(PathBuf, FileMode, Oid)>,
    /// Submodules that differ (not restored).
    submodules: Vec<PathBuf>,
}

impl Plan {
    fn between(repo: &Repository, current: Oid, target: Oid) -> Result<Self, CheckpointError> {
        let mut opts = DiffOptions::new();
        opts.skip_binary_check(true);
        let diff = super::diff::tree_diff(repo, current, target, &mut opts)?;
        let mut plan = Plan {
            remove: Vec::new(),
            write: Vec::new(),
            submodules: Vec::new(),
        };
        for delta in diff.deltas() {
            let (old, new) = (delta.old_file(), delta.new_file());
            let path = new
                .path()
                .or(old.path())
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if old.mode() == FileMode::Commit || new.mode() == FileMode::Commit {
                plan.submodules.push(path);
            } else if delta.status() == Delta::Deleted {
                plan.remove.push(path);
            } else {
                plan.write.push((path, new.mode(), new.id()));
            }
        }
        Ok(plan)
    }

    fn apply(
        self,
        repo: &Repository,
        root: &Path,
        report: &mut RollbackReport,
    ) -> Result<(), CheckpointError> {
        let is_rules = |p: &Path| p.file_name().is_some_and(|n| n == ".gitignore");
        let (rules_gone, other_gone): (Vec<_>, Vec<_>) =
            self.remove.into_iter().partition(|p| is_rules(p));
        let (rules, others): (Vec<_>, Vec<_>) =
            self.write.into_iter().partition(|(p, _, _)| is_rules(p));
        // The restored ignore rules decide which of the other removals to skip.
        for path in rules_gone {
            restore::remove(root, &path)?;
            report.removed.push(shown(&path));
        }
        for (path, mode, blob) in rules {
            write_blob(repo, root, &path, mode, blob)?;
            report.restored.push(shown(&path));
        }
        let fresh = Repository::open(repo.path()).map_err(git("reopen the repository"))?;
        for path in other_gone {
            if fresh.is_path_ignored(&path).unwrap_or(false) {
                report.kept.push(shown(&path));
            } else {
                restore::remove(root, &path)?;
                report.removed.push(shown(&path));
            }
        }
        for (path, mode, blob) in others {
            write_blob(repo, root, &path, mode, blob)?;
            report.restored.push(shown(&path));
        }
        report.kept.extend(self.submodules.iter().map(|p| shown(p)));
        Ok(())
    }
}

fn write_blob(
    repo: &Repository,
    root: &Path,
    path: &Path,
    mode: FileMode,
    blob: Oid,
) -> Result<(), CheckpointError> {
    let blob = repo
        .find_blob(blob)
        .map_err(git("read a file of the checkpoint"))?;
    restore::write(root, path, mode, blob.content())
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
