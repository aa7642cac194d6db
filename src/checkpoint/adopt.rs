//! A run moved to another checkout (a resume on another machine or in another path): the
//! workspace is checked to be the commit the run started at with the run's diff.patch
//! applied — or, while still clean at that commit, the diff is written into it — and the
//! run's start and its changes so far become its checkpoints in this repository, so the
//! resumed run numbers on after them and its final diff is the whole run's.
//!
//! Only content-addressed facts cross machines: the commit id and the patch. The files are
//! written by the rollback's own code (descriptors that follow no link out of the tree).

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Signature};

use super::error::git;
use super::snapshot::{self, Snapshotter};
use super::{CheckpointError, Limits, commit_message, reference_name};

/// What the run folder says of where the run stood.
#[derive(Debug, Clone)]
pub struct Moved {
    /// The commit the run started at (HEAD then).
    pub commit: String,
    /// diff.patch: everything the run changed since its start.
    pub patch: Vec<u8>,
    /// The run's last checkpoint index (0: none after the start).
    pub last_index: u32,
}

/// How the workspace was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Adopted {
    /// It already held the run's changes.
    AlreadyThere,
    /// It was clean at the commit; the run's changes were written into it.
    Applied { files: usize },
}

/// Check `workspace` against `moved` and adopt the run's checkpoints there. `Ok(Err(why))`:
/// the workspace is not the run's, and why, in words. `exclude`: the run folder.
pub fn adopt(
    workspace: &Path,
    exclude: &[PathBuf],
    run_id: &str,
    moved: &Moved,
) -> Result<Result<Adopted, String>, CheckpointError> {
    super::check_run_id(run_id)?;
    let repo = match snapshot::open_repo(workspace)? {
        Ok(repo) => repo,
        Err(reason) => return Ok(Err(reason.to_string())),
    };
    let (base, expected) = match expected_tree(&repo, moved) {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let base_tree = repo
        .find_commit(base)
        .map_err(git("read the start commit"))?
        .tree_id();
    let root = snapshot::workdir(&repo)?;
    let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
    let exclude = snapshot::relative_prefixes(&root, &canonical, exclude);
    let mut snap = Snapshotter::new(repo, Some(base_tree), exclude.clone())?;
    let now = snap.tree()?;
    if now != expected && now != base_tree {
        return Ok(Err(differences(snap.repo(), &moved.commit, expected, now)?));
    }
    let index = moved.last_index.max(1);
    make_refs(snap.repo(), run_id, base, expected, index, &exclude)?;
    if now == expected {
        return Ok(Ok(Adopted::AlreadyThere));
    }
    drop(snap);
    let report = super::rollback(workspace, run_id, Some(index))?;
    Ok(Ok(Adopted::Applied {
        files: report.restored.len() + report.removed.len(),
    }))
}

/// The start commit and the tree the run's patch makes of it, or why there is none here.
fn expected_tree(repo: &Repository, moved: &Moved) -> Result<(Oid, Oid), String> {
    let wanted = Oid::from_str(&moved.commit).map_err(|_| {
        format!(
            "the run's start commit `{}` is not a commit id",
            moved.commit
        )
    })?;
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let head = head.map(|c| c.id());
    if head != Some(wanted) {
        let at = head.map_or("no commit".to_owned(), |h| h.to_string());
        let fetch = if repo.find_commit(wanted).is_err() {
            " (this repository does not have it: fetch it first)"
        } else {
            ""
        };
        return Err(format!(
            "the workspace is at {at}, the run started at {wanted}{fetch}: check that \
             commit out (`git checkout {wanted}`) and resume again"
        ));
    }
    let commit = repo
        .find_commit(wanted)
        .map_err(|e| e.message().to_owned())?;
    let tree = commit.tree().map_err(|e| e.message().to_owned())?;
    if moved.patch.iter().all(u8::is_ascii_whitespace) {
        return Ok((wanted, tree.id()));
    }
    let unusable = |e: git2::Error| {
        format!(
            "the run's diff.patch does not apply to {wanted}: {}",
            e.message()
        )
    };
    let diff = git2::Diff::from_buffer(&moved.patch).map_err(unusable)?;
    let mut index = repo.apply_to_tree(&tree, &diff, None).map_err(unusable)?;
    let made = index.write_tree_to(repo).map_err(unusable)?;
    Ok((wanted, made))
}

/// The paths where the workspace differs from what the run left, in words.
fn differences(
    repo: &Repository,
    commit: &str,
    expected: Oid,
    now: Oid,
) -> Result<String, CheckpointError> {
    let mut opts = git2::DiffOptions::new();
    opts.skip_binary_check(true).include_typechange(true);
    let diff = super::diff::tree_diff(repo, expected, now, &mut opts)?;
    let mut paths: Vec<String> = diff
        .deltas()
        .filter_map(|d| {
            let path = d.new_file().path().or_else(|| d.old_file().path())?;
            let how = match d.status() {
                git2::Delta::Added => "not the run's",
                git2::Delta::Deleted => "missing",
                _ => "changed",
            };
            Some(format!("{} ({how})", path.display()))
        })
        .collect();
    let more = paths.len().saturating_sub(20);
    paths.truncate(20);
    let mut list = paths.join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    Ok(format!(
        "the workspace is not {commit} with the run's diff.patch applied: {list}. Leave it \
         clean at {commit} (cn-run then applies the diff) or apply diff.patch yourself, then \
         resume again"
    ))
}

/// `refs/cn-run/RUN/0` at the start commit's tree and, if the run changed anything,
/// `refs/cn-run/RUN/INDEX` at what it made. References already there are kept.
fn make_refs(
    repo: &Repository,
    run_id: &str,
    base: Oid,
    expected: Oid,
    index: u32,
    exclude: &[String],
) -> Result<(), CheckpointError> {
    let who = Signature::now("cn-run", "cn-run@localhost").map_err(git("make a signature"))?;
    let base_commit = repo
        .find_commit(base)
        .map_err(git("read the start commit"))?;
    let start_name = reference_name(run_id, 0);
    let start = if let Ok(id) = repo.refname_to_id(&start_name) {
        id
    } else {
        let message = commit_message(run_id, 0, "start", exclude, Some(Limits::default()));
        let tree = base_commit.tree().map_err(git("read the start tree"))?;
        let id = repo
            .commit(None, &who, &who, &message, &tree, &[&base_commit])
            .map_err(git("write the start snapshot"))?;
        repo.reference(&start_name, id, false, "cn-run: a moved run's start")
            .map_err(git("create the start reference"))?;
        id
    };
    if expected == base_commit.tree_id()
        || repo.refname_to_id(&reference_name(run_id, index)).is_ok()
    {
        return Ok(());
    }
    let label = "the run's changes so far (its diff.patch, resumed in another checkout)";
    let message = commit_message(run_id, index, label, &[], None);
    let tree = repo
        .find_tree(expected)
        .map_err(git("read the run's tree"))?;
    let parent = repo
        .find_commit(start)
        .map_err(git("read the start snapshot"))?;
    let id = repo
        .commit(None, &who, &who, &message, &tree, &[&parent])
        .map_err(git("write the moved run's snapshot"))?;
    repo.reference(
        &reference_name(run_id, index),
        id,
        false,
        "cn-run: a moved run",
    )
    .map_err(git("create the moved run's reference"))?;
    Ok(())
}
