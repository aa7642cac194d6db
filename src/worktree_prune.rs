//! Removing what dead `--parallel` runs left in the user's repository: a run killed
//! (`kill -9`, a cancelled CI job, a crash) never removes its throwaway worktree and its
//! `cn-run/<id>` branch. Each live run holds a lock beside its worktree (see `worktree`);
//! a `cn-run-<id>` worktree whose lock nobody holds (or that has none) is a dead run's,
//! and is removed with its branch — through libgit2, so no program the repository names
//! runs. A worktree another process is still using is left alone.
//!
//! The folder libgit2 names for a worktree comes from `.git/worktrees/<name>/gitdir`, which
//! a run could have rewritten: it is removed only when it is a real folder named for the
//! run in a `.cn-run/worktrees` folder, as cn-run makes them — never whatever else it names
//! (the administrative entry and the branch still go).

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
        if made_by_cn_run(&dest, id) {
            std::fs::remove_dir_all(&dest)?;
        }
        let mut opts = WorktreePruneOptions::new();
        opts.valid(true).locked(true).working_tree(false);
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

/// Whether `dest` is a real folder where cn-run puts run `id`'s worktree
/// (`…/.cn-run/worktrees/<id>`), not a link nor any other folder.
fn made_by_cn_run(dest: &Path, id: &str) -> bool {
    let named = |p: Option<&Path>, name: &str| p.and_then(Path::file_name) == Some(name.as_ref());
    let parent = dest.parent();
    named(Some(dest), id)
        && named(parent, "worktrees")
        && named(parent.and_then(Path::parent), ".cn-run")
        && dest.symlink_metadata().is_ok_and(|m| m.is_dir())
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

    fn repo_in(dir: &Path) -> std::path::PathBuf {
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "x"]);
        repo
    }

    #[test]
    fn a_dead_runs_worktree_and_branch_go_and_a_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo_in(dir.path());
        let base = repo.join(".cn-run/worktrees");
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

    #[test]
    fn a_rewritten_gitdir_never_gets_another_folder_removed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo_in(dir.path());
        let dead =
            RunWorktree::create(&repo, &repo.join(".cn-run/worktrees/dead"), "dead").unwrap();
        let outside = dir.path().join("precious");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
        // The dead run's admin entry now names a folder of the user's.
        let entry = repo.join(".git/worktrees/cn-run-dead/gitdir");
        std::fs::write(&entry, format!("{}\n", outside.join(".git").display())).unwrap();
        drop(dead);
        assert_eq!(prune_dead(&repo).unwrap(), ["cn-run/dead"]);
        assert!(
            outside.join("keep.txt").exists(),
            "the folder it named is left alone"
        );
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
        assert_eq!(git(&repo, &["branch", "--list", "cn-run/*"]), "");
    }
}
