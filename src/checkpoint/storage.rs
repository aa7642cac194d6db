//! What a run's checkpoints add to `.git`, and taking it out again.
//!
//! A run's objects are the snapshot commits and every tree and blob in their trees that
//! the tree of HEAD at the start did not hold. What they occupy is the size of those of
//! them stored as loose objects (libgit2 writes loose objects; a `git gc` may pack them
//! later). Removing a run deletes its hidden refs, then those of its loose objects that
//! nothing else reaches — a user's commit may hold the very blob a snapshot wrote, since
//! git does not write an object twice — as `git rev-list --objects --all --reflog
//! --indexed-objects` tells (the same reachability `git prune` uses). That git runs with
//! repository-defined programs turned off (see [`safe_git`]).

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{ObjectType, Oid, Repository};

use super::error::{CheckpointError, git};
use super::{REF_ROOT, check_run_id, snapshot};

/// What `cn-run sessions prune` (or `git.keep`) removed.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct PruneReport {
    /// The runs whose checkpoints were removed.
    pub runs: Vec<String>,
    /// Hidden refs deleted.
    pub refs_removed: usize,
    /// Loose objects deleted (only those nothing else reaches).
    pub objects_removed: usize,
    /// Bytes those objects took on disk.
    pub bytes_freed: u64,
    /// Why objects were left (for `git gc` to collect), when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A `git` over the repository at `dir` that runs no program the repository or its
/// config names: no fsmonitor, no hooks, no external diff or pager, no optional locks.
pub(crate) fn safe_git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    for setting in [
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.untrackedCache=false",
        "core.pager=cat",
        "diff.external=",
        "gc.auto=0",
        "maintenance.auto=false",
    ] {
        cmd.args(["-c", setting]);
    }
    cmd.env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_PAGER")
        .stdin(Stdio::null());
    cmd
}

/// The bytes of loose objects run `run_id` added to the repository of `workspace`.
pub fn added_bytes(workspace: &Path, run_id: &str) -> Result<u64, CheckpointError> {
    let repo = snapshot::open_repo(workspace)??;
    let objects = run_objects(&repo, run_id)?;
    Ok(objects
        .iter()
        .filter_map(|oid| loose_path(&repo, *oid).metadata().ok())
        .map(|m| m.len())
        .sum())
}

/// Removes the checkpoints of `runs` from the repository of `workspace`: their refs,
/// then the loose objects only they reached.
pub fn prune(workspace: &Path, runs: &[String]) -> Result<PruneReport, CheckpointError> {
    let repo = snapshot::open_repo(workspace)??;
    let mut report = PruneReport::default();
    let mut candidates = BTreeSet::new();
    for run in runs {
        check_run_id(run)?;
        candidates.extend(run_objects(&repo, run)?);
        let names: Vec<String> = refs_of(&repo, run)?;
        if names.is_empty() {
            continue;
        }
        for name in &names {
            if let Ok(mut r) = repo.find_reference(name) {
                r.delete().map_err(git("delete a checkpoint reference"))?;
                report.refs_removed += 1;
            }
        }
        report.runs.push(run.clone());
    }
    candidates.retain(|oid| loose_path(&repo, *oid).exists());
    if candidates.is_empty() {
        return Ok(report);
    }
    match unreached(&repo, candidates) {
        Ok(gone) => {
            for oid in gone {
                let path = loose_path(&repo, oid);
                let bytes = path.metadata().map_or(0, |m| m.len());
                if std::fs::remove_file(&path).is_ok() {
                    report.objects_removed += 1;
                    report.bytes_freed += bytes;
                }
            }
        }
        Err(why) => report.note = Some(why.to_string()),
    }
    Ok(report)
}

/// Removes the checkpoints of all runs but the `keep` newest.
pub fn keep_newest(workspace: &Path, keep: usize) -> Result<PruneReport, CheckpointError> {
    keep_newest_and(workspace, keep, None)
}

/// As [`keep_newest`], `current` counted among the kept whatever its place: runs are
/// ordered by their start snapshot's time, which has a resolution of one second, so a
/// run that started in the same second as an older one may sort before it (`git.keep`
/// at the end of a run must not remove that run's own checkpoints).
pub(crate) fn keep_newest_and(
    workspace: &Path,
    keep: usize,
    current: Option<&str>,
) -> Result<PruneReport, CheckpointError> {
    let mut runs: Vec<String> = super::list_runs(workspace)?
        .into_iter()
        .map(|(run, _)| run)
        .collect();
    let mut keep = keep;
    if let Some(current) = current.filter(|_| keep > 0) {
        runs.retain(|run| run != current);
        keep -= 1;
    }
    let old = runs.len().saturating_sub(keep);
    runs.truncate(old);
    prune(workspace, &runs)
}

/// The references of one run.
fn refs_of(repo: &Repository, run_id: &str) -> Result<Vec<String>, CheckpointError> {
    let glob = format!("{REF_ROOT}{run_id}/*");
    let refs = repo
        .references_glob(&glob)
        .map_err(git("list references"))?;
    Ok(refs
        .filter_map(Result::ok)
        .filter_map(|r| r.name().ok().map(str::to_owned))
        .collect())
}

/// The run's snapshot commits and the trees and blobs in them that the tree of HEAD at
/// the start (snapshot 0's parent) did not hold at the same path. The walk goes down only
/// where a snapshot's tree differs from that tree, so it costs what the run changed, not
/// the size of the repository. (A file the run copied or moved from elsewhere in the tree
/// is counted although git already held its blob; [`prune`] asks git what is reached
/// before removing anything.)
fn run_objects(repo: &Repository, run_id: &str) -> Result<BTreeSet<Oid>, CheckpointError> {
    let mut commits = Vec::new();
    for name in refs_of(repo, run_id)? {
        if let Ok(c) = repo.find_reference(&name).and_then(|r| r.peel_to_commit()) {
            commits.push(c);
        }
    }
    let base = repo
        .find_reference(&super::reference_name(run_id, 0))
        .and_then(|r| r.peel_to_commit())
        .and_then(|c| c.parent(0))
        .map(|p| p.tree_id())
        .ok();
    let mut seen = HashSet::new();
    let mut found = BTreeSet::new();
    for c in &commits {
        found.insert(c.id());
        collect(repo, c.tree_id(), base, &mut seen, &mut found)?;
    }
    Ok(found)
}

/// Adds to `found` tree `tree` and what it holds that `base` (the tree at the same path
/// at the start) does not hold at the same name; equal subtrees are skipped whole, and
/// objects in `seen` are not looked at again.
fn collect(
    repo: &Repository,
    tree: Oid,
    base: Option<Oid>,
    seen: &mut HashSet<Oid>,
    found: &mut BTreeSet<Oid>,
) -> Result<(), CheckpointError> {
    if base == Some(tree) || !seen.insert(tree) {
        return Ok(());
    }
    found.insert(tree);
    let t = repo.find_tree(tree).map_err(git("read a snapshot tree"))?;
    let old = match base {
        Some(b) => Some(repo.find_tree(b).map_err(git("read the start tree"))?),
        None => None,
    };
    for entry in &t {
        let before = old
            .as_ref()
            .and_then(|o| o.get_name_bytes(entry.name_bytes()));
        if before.as_ref().is_some_and(|b| b.id() == entry.id()) {
            continue;
        }
        match entry.kind() {
            Some(ObjectType::Tree) => {
                let old_tree = before
                    .filter(|b| b.kind() == Some(ObjectType::Tree))
                    .map(|b| b.id());
                collect(repo, entry.id(), old_tree, seen, found)?;
            }
            Some(ObjectType::Blob) if seen.insert(entry.id()) => {
                found.insert(entry.id());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why the objects a prune left could not be told apart (they stay for `git gc`; the
/// report notes it).
#[derive(Debug, thiserror::Error)]
enum RevListError {
    #[error("objects left for `git gc`: cannot run git: {0}")]
    Start(#[source] std::io::Error),
    #[error("objects left for `git gc`: git rev-list failed ({0})")]
    Failed(std::process::ExitStatus),
    #[error("objects left for `git gc`: {0}")]
    Wait(#[source] std::io::Error),
}

/// Of `candidates`, those no ref, reflog or index reaches.
fn unreached(
    repo: &Repository,
    mut candidates: BTreeSet<Oid>,
) -> Result<BTreeSet<Oid>, RevListError> {
    let dir = repo.workdir().unwrap_or(repo.path());
    let mut child = safe_git(dir)
        .args([
            "rev-list",
            "--objects",
            "--all",
            "--reflog",
            "--indexed-objects",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(RevListError::Start)?;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let hex = line.split(' ').next().unwrap_or("");
            if let Ok(oid) = Oid::from_str(hex) {
                candidates.remove(&oid);
            }
        }
    }
    match child.wait() {
        Ok(s) if s.success() => Ok(candidates),
        Ok(s) => Err(RevListError::Failed(s)),
        Err(e) => Err(RevListError::Wait(e)),
    }
}

/// Where a loose object lives.
fn loose_path(repo: &Repository, oid: Oid) -> PathBuf {
    let hex = oid.to_string();
    repo.commondir()
        .join("objects")
        .join(&hex[..2])
        .join(&hex[2..])
}
