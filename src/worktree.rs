//! Throwaway git worktrees, so concurrent runs of jobs on one repository never share a
//! dirty tree: each gets a fresh checkout of HEAD on a temporary branch
//! (`cn-run/<run-id>`), removed with the worktree when the run ends. The user's working
//! tree, index, HEAD and branches are never touched; the run's changes survive as its
//! diff.patch and its checkpoint refs (which live in the shared repository).
//!
//! While a run lives, it holds a lock beside its worktree (`<id>.lock`, flock): a worktree
//! whose lock nobody holds belongs to a run that died (`kill -9`, a cancelled CI job), and
//! the next `--parallel` call removes it and its branch (`worktree_prune`).
//!
//! Everything here goes through libgit2, which runs no program a repository names (no
//! hooks, no `core.fsmonitor`, no filter or diff drivers), so a tree the model wrote cannot
//! make cn-run itself run its code (test: `no_program_the_repository_names_runs`).

use std::path::{Path, PathBuf};

use git2::{BranchType, Repository, WorktreeAddOptions, WorktreePruneOptions};

/// Held while a worktree is made or removed (see [`RunWorktree::create`]).
static WORKTREE_CHANGES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A worktree created for one run.
#[derive(Debug)]
pub struct RunWorktree {
    /// The repository the worktree belongs to (its common git dir).
    repo_dir: PathBuf,
    /// Worktree (and branch) name.
    name: String,
    /// The worktree's root.
    pub root: PathBuf,
    /// Where the job's workspace is inside it (the same relative place as in the repo).
    pub workspace: PathBuf,
    /// Held while the run lives (see [`lock_path`]).
    lock: Option<(std::fs::File, PathBuf)>,
}

/// The lock a run holds while its worktree at `dest` lives.
pub(crate) fn lock_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let mut lock = name;
    lock.push(".lock");
    dest.with_file_name(lock)
}

/// Why a worktree could not be made or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("{0} is not inside a git repository with a commit; --isolate worktree needs one")]
    NoRepository(String),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl RunWorktree {
    /// A fresh checkout of HEAD of the repository containing `workspace`, at `dest`
    /// (which must not exist), named `name` (a valid branch name component).
    pub fn create(workspace: &Path, dest: &Path, name: &str) -> Result<RunWorktree, WorktreeError> {
        let repo = Repository::discover(workspace)
            .map_err(|_| WorktreeError::NoRepository(workspace.display().to_string()))?;
        let head = repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(|_| WorktreeError::NoRepository(workspace.display().to_string()))?;
        let top = repo
            .workdir()
            .ok_or_else(|| WorktreeError::NoRepository(workspace.display().to_string()))?
            .canonicalize()?;
        let rel = workspace
            .canonicalize()?
            .strip_prefix(&top)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        // libgit2's worktree calls are not safe to run at once on one repository: a
        // creation racing another (or a removal) failed with "already checked out" or
        // "failed to make directory .git/worktrees". Jobs of one call take turns here.
        let _turn = WORKTREE_CHANGES.lock().unwrap_or_else(|e| e.into_inner());
        let branch_name = format!("cn-run/{name}");
        let branch = repo.branch(&branch_name, &head, false)?;
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // Taken before the worktree exists: one seen without a held lock is a dead run's.
        let lock_file = lock_path(dest);
        let held = std::fs::File::create(&lock_file)?;
        held.lock()?;
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(branch.get()));
        let worktree_name = format!("cn-run-{name}");
        // libgit2 makes `.git/worktrees` with an exclusive mkdir: two jobs of one
        // `--parallel` call creating their first worktrees at once made one of them fail
        // ("directory exists"). Made here first, the race is gone.

        repo.worktree(&worktree_name, dest, Some(&opts))?;
        let root = dest.canonicalize()?;
        Ok(RunWorktree {
            repo_dir: repo.commondir().to_path_buf(),
            name: name.to_owned(),
            workspace: root.join(&rel),
            root,
            lock: Some((held, lock_file)),
        })
    }

    /// Remove the worktree's files, its administrative entry and its temporary branch.
    pub fn remove(self) -> Result<(), WorktreeError> {
        let repo = Repository::open(&self.repo_dir)?;
        let _turn = WORKTREE_CHANGES.lock().unwrap_or_else(|e| e.into_inner());
        // The administrative entry only: its `gitdir` file names the working tree, and a
        // run could have rewritten it to name any folder. The folder removed is the one
        // recorded when the worktree was made.
        if let Ok(wt) = repo.find_worktree(&format!("cn-run-{}", self.name)) {
            let mut opts = WorktreePruneOptions::new();
            opts.valid(true).locked(true).working_tree(false);
            wt.prune(Some(&mut opts))?;
        }
        if self.root.exists() {
            std::fs::remove_dir_all(&self.root)?;
        }
        if let Ok(mut b) = repo.find_branch(&format!("cn-run/{}", self.name), BranchType::Local) {
            b.delete()?;
        }
        if let Some((_held, path)) = &self.lock {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn a_worktree_is_a_clean_checkout_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let repo = committed(dir.path(), "sub/a.txt");
        std::fs::write(repo.join("sub/a.txt"), "dirty\n").unwrap();
        let branches_before = git(&repo, &["branch", "-a"]);
        let wt = RunWorktree::create(&repo.join("sub"), &dir.path().join("wt"), "run1").unwrap();
        assert_eq!(
            std::fs::read_to_string(wt.workspace.join("a.txt")).unwrap(),
            "a\n",
            "HEAD, not the dirty file"
        );
        std::fs::write(wt.workspace.join("a.txt"), "changed in the worktree\n").unwrap();
        wt.remove().unwrap();
        assert!(!dir.path().join("wt").exists());
        assert_eq!(
            std::fs::read_to_string(repo.join("sub/a.txt")).unwrap(),
            "dirty\n"
        );
        assert_eq!(git(&repo, &["branch", "-a"]), branches_before);
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    }

    /// A repository in `dir/repo` with one commit: `file` (a path in it) holding `a`.
    fn committed(dir: &Path, file: &str) -> std::path::PathBuf {
        let repo = dir.join("repo");
        let file = repo.join(file);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "a\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(
            &repo,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "x",
            ],
        );
        repo
    }

    #[test]
    fn removal_deletes_the_recorded_folder_not_the_one_a_rewritten_gitdir_names() {
        let dir = tempfile::tempdir().unwrap();
        let repo = committed(dir.path(), "a.txt");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
        // Another checkout's `.git` (any folder with one: the user's other projects).
        std::fs::write(outside.join(".git"), "gitdir: /nowhere\n").unwrap();
        let entry = |name: &str| repo.join(format!(".git/worktrees/cn-run-{name}/gitdir"));
        let wt = RunWorktree::create(&repo, &dir.path().join("wt"), "r1").unwrap();
        std::fs::write(entry("r1"), format!("{}\n", outside.join(".git").display())).unwrap();
        wt.remove().unwrap();
        assert!(
            outside.join("keep.txt").exists(),
            "the outside folder was removed"
        );
        assert!(!dir.path().join("wt").exists());
        // The control: libgit2's prune of the working tree follows the rewritten entry.
        let wt = RunWorktree::create(&repo, &dir.path().join("wt2"), "r2").unwrap();
        std::fs::write(entry("r2"), format!("{}\n", outside.join(".git").display())).unwrap();
        let r = Repository::open(&repo).unwrap();
        let mut opts = WorktreePruneOptions::new();
        opts.valid(true).locked(true).working_tree(true);
        r.find_worktree("cn-run-r2")
            .unwrap()
            .prune(Some(&mut opts))
            .unwrap();
        assert!(!outside.exists(), "the control did not follow the entry");
        drop(wt);
    }

    #[test]
    fn no_program_the_repository_names_runs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let marker = dir.path().join("ran");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        std::fs::write(repo.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
        git(&repo, &[&who[..], &["commit", "-qm", "x"]].concat());
        let payload = format!("sh -c 'touch {}'", marker.display());
        for key in [
            "core.fsmonitor",
            "filter.evil.smudge",
            "filter.evil.clean",
            "diff.evil.textconv",
        ] {
            git(&repo, &["config", key, &payload]);
        }
        for hook in [
            "post-checkout",
            "pre-commit",
            "reference-transaction",
            "post-index-change",
        ] {
            let path = repo.join(".git/hooks").join(hook);
            std::fs::write(&path, format!("#!/bin/sh\n{payload}\n")).unwrap();
            let mut perms = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&path, perms).unwrap();
        }
        let wt = RunWorktree::create(&repo, &dir.path().join("wt"), "run1").unwrap();
        std::fs::write(wt.workspace.join("a.txt"), "changed\n").unwrap();
        let _ = crate::agent::git_status(&wt.workspace);
        wt.remove().unwrap();
        assert!(!marker.exists(), "a program the repository names ran");
        // The payload itself works: git (the program) runs it.
        git(&repo, &["status"]);
        assert!(
            marker.exists(),
            "the planted fsmonitor is a working payload"
        );
    }

    #[test]
    fn worktrees_made_and_removed_at_the_same_time_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
        git(&repo, &[&who[..], &["commit", "-qm", "x"]].concat());
        // Four threads released together, each making and removing worktrees in turn, as
        // the jobs of `cn-run --parallel 4` do: one job's removal must not break another
        // job's creation (it did: "failed to make directory .git/worktrees").
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (start, repo, base) = (start.clone(), repo.clone(), dir.path().to_owned());
                std::thread::spawn(move || {
                    start.wait();
                    for n in 0..10 {
                        let name = format!("t{t}-{n}");
                        let wt = RunWorktree::create(&repo, &base.join(&name), &name)
                            .map_err(|e| format!("{name}: {e}"))?;
                        let text = std::fs::read_to_string(wt.workspace.join("a.txt"));
                        assert_eq!(text.unwrap(), "a\n");
                        wt.remove().map_err(|e| format!("{name}: {e}"))?;
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    }
}
