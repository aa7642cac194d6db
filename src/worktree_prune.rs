//! Removing what dead `--parallel` runs left in the user's repository: a run killed
//! (`kill -9`, a cancelled CI job, a crash) never removes its throwaway worktree and its
//! `cn-run/<id>` branch. Each live run holds a lock beside its worktree (see `worktree`);
//! a `cn-run-<id>` worktree whose lock nobody holds (or that has none) is a dead run's,
//! and is removed with its branch — through libgit2, so no program the repository names
//! runs. A worktree another process is still using is left alone.

use std::path::Path;

use git2::{BranchType, Repository, WorktreePruneOptions};

use crate::worktree::{WorktreeError, lock_path};

/// Removes the worktrees and branches of dead runs of the repository holding
/// `workspace`; returns the names of the branches removed.
pub fn prune_dead(workspace: &Path) -> Result<Vec<String>, WorktreeError> {
    let Ok(repo) = Repository::discover(workspace) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    let names = repo.worktrees()?;
    for name in names.iter().flatten().flatten() {
        let Some(id) = name.strip_prefix("cn-run-") else {
            continue;
        };
        let Ok(wt) = repo.find_worktree(name) else {
            continue;
        };
        let dest = wt.path().to_path_buf();
        let lock = lock_path(&dest);
        // Held while this check runs, so the run cannot come back to life meanwhile.
        let Some(_held) = dead(&lock) else {
            continue;
        };
        if dest.exists() {
            std::fs::remove_dir_all(&dest)?;
        }
        let mut opts = WorktreePruneOptions::new();
        opts.valid(true).locked(true).working_tree(true);
        wt.prune(Some(&mut opts))?;
        let branch = format!("cn-run/{id}");
        if let Ok(mut b) = repo.find_branch(&branch, BranchType::Local) {
            b.delete()?;
        }
        let _ = std::fs::remove_file(&lock);
        removed.push(branch);
    }
    Ok(removed)
}

/// The lock at `path`, taken, if no live run holds it (a missing lock counts as dead: a
/// worktree of an earlier version, or one whose folder was removed).
fn dead(path: &Path) -> Option<Option<std::fs::File>> {
    let Ok(file) = std::fs::OpenOptions::new().write(true).open(path) else {
        return Some(None);
    };
    file.try_lock().ok().map(|()| Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worktree::RunWorktree;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn a_dead_runs_worktree_and_branch_go_and_a_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "x"]);
        let base = dir.path().join("wts");
        let live = RunWorktree::create(&repo, &base.join("live"), "live").unwrap();
        let dead = RunWorktree::create(&repo, &base.join("dead"), "dead").unwrap();
        // A killed process: nothing of it runs, its lock is let go, nothing is removed.
        let dead_root = dead.root.clone();
        drop(dead);
        assert!(dead_root.exists());
        let removed = prune_dead(&repo).unwrap();
        assert_eq!(removed, ["cn-run/dead"]);
        assert!(!dead_root.exists());
        let branches = git(&repo, &["branch", "--list", "cn-run/*"]);
        assert!(
            branches.contains("cn-run/live") && !branches.contains("cn-run/dead"),
            "{branches}"
        );
        assert!(live.root.exists());
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 2);
        // Control: the branch and worktree were there to remove.
        live.remove().unwrap();
        assert!(prune_dead(&repo).unwrap().is_empty());
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    }
}
