//! `.git` is the run's, not the model's: the git folders a contained command must not
//! change, found once when the run starts. A hook, `core.fsmonitor`, `diff.external` or
//! `core.worktree` planted there would run, or redirect, the next git command the workflow
//! runs outside any sandbox; so inside the sandbox every `.git` under a writable folder (a
//! folder, or a `gitdir:` pointer file and the folder it names, with its `commondir`) is
//! read-only, nested repositories present at start included, as in codex.
//!
//! A job whose agent commits says so (`tools.bash.git: commit`): then the git folders are
//! writable (objects, refs, index) but their hooks, config and info stay read-only, and the
//! pointer files too.

use std::path::{Path, PathBuf};

use super::GitAccess;

impl GitAccess {
    /// The default (for serde's `skip_serializing_if`).
    pub fn is_read_only(&self) -> bool {
        *self == GitAccess::ReadOnly
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GitAccess::ReadOnly => "read-only",
            GitAccess::Commit => "commit",
        }
    }
}

/// What stays read-only in a git folder under `commit`.
const ALWAYS_READ_ONLY: &[&str] = &["hooks", "config", "info", "config.worktree"];
/// How deep below a writable folder nested repositories are looked for, and how many
/// entries at most are read (a huge tree is not walked whole at every start).
const MAX_DEPTH: usize = 8;
const MAX_ENTRIES: usize = 200_000;

/// Under `commit`: the git folders themselves, bound writable over themselves so that no
/// command can move or replace one (a mount point cannot be renamed or removed).
pub fn anchors(roots: &[PathBuf], access: GitAccess) -> Vec<PathBuf> {
    if access != GitAccess::Commit {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| dot_gits(r))
        .flat_map(|d| resolve(&d))
        .filter(|g| roots.iter().any(|r| g.starts_with(r)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The paths to bind read-only over the writable folders `roots` (existing ones only).
pub fn protected(roots: &[PathBuf], access: GitAccess) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        let (dot_gits, bare) = git_folders(root);
        for dot_git in dot_gits.into_iter().chain(bare) {
            let gitdirs = resolve(&dot_git);
            if dot_git.is_file() || access == GitAccess::ReadOnly {
                out.push(dot_git.clone());
            }
            for gitdir in gitdirs {
                match access {
                    GitAccess::ReadOnly => out.push(gitdir.clone()),
                    GitAccess::Commit => out.extend(inner(&gitdir)),
                }
            }
        }
    }
    out.retain(|p| roots.iter().any(|r| p.starts_with(r)));
    out.sort();
    out.dedup();
    // A path beneath another one already read-only adds nothing.
    let all = out.clone();
    out.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    out
}

/// Every git folder of the repositories beneath `root` (its own `.git` included): each
/// `.git` folder, each bare repository's folder, or the folder a `gitdir:` pointer names and its common folder, and the
/// submodules' and linked worktrees' folders under them (`modules/**`, `worktrees/*`).
pub fn git_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let (dot_gits, bare) = git_folders(root);
    for dot_git in dot_gits.into_iter().chain(bare) {
        for gitdir in resolve(&dot_git) {
            out.extend(git_dirs_within(&gitdir));
            out.push(gitdir);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The submodules' git folders (`modules/**`, each with a `HEAD`) and the linked
/// worktrees' (`worktrees/*`) under the git folder `gitdir`.
pub fn git_dirs_within(gitdir: &Path) -> Vec<PathBuf> {
    let modules = walkdir::WalkDir::new(gitdir.join("modules"))
        .max_depth(MAX_DEPTH)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir() && e.path().join("HEAD").is_file());
    let worktrees = walkdir::WalkDir::new(gitdir.join("worktrees"))
        .min_depth(1)
        .max_depth(1)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir());
    modules
        .chain(worktrees)
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// Every `.git` (folder or file) beneath `root`, not descending into one.
pub fn dot_gits(root: &Path) -> Vec<PathBuf> {
    git_folders(root).0
}

/// Every bare repository beneath `root` (a folder not named `.git` holding a `HEAD` file and
/// `objects` and `refs` folders, as git itself tells a git folder): `git --git-dir` (or git
/// run inside it) reads its config and runs its hooks as it would a `.git`'s.
pub fn bare_repos(root: &Path) -> Vec<PathBuf> {
    git_folders(root).1
}

/// The `.git`s and the bare repositories beneath `root`, in one walk that does not descend
/// into a `.git` folder (a bare repository is seen by its `HEAD` file: no look at any
/// other folder).
pub fn git_folders(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut dot_gits, mut bare): (Vec<PathBuf>, Vec<PathBuf>) = (Vec::new(), Vec::new());
    let mut it = walkdir::WalkDir::new(root)
        .max_depth(MAX_DEPTH)
        .follow_links(false)
        .into_iter();
    let mut seen = 0;
    while let Some(next) = it.next() {
        seen += 1;
        if seen > MAX_ENTRIES {
            break;
        }
        let Ok(entry) = next else { continue };
        if entry.depth() > 0 && entry.file_name() == ".git" {
            dot_gits.push(entry.path().to_path_buf());
            if entry.file_type().is_dir() {
                it.skip_current_dir();
            }
        } else if entry.depth() > 1
            && entry.file_name() == "HEAD"
            && entry.file_type().is_file()
            && let Some(dir) = entry.path().parent()
            && is_git_folder(dir)
            && !bare.iter().any(|b| dir.starts_with(b))
        {
            bare.push(dir.to_path_buf());
        }
    }
    (dot_gits, bare)
}

/// Whether `dir` has what git looks for in a git folder: a `HEAD` file (not a link) and
/// `objects` and `refs` folders.
fn is_git_folder(dir: &Path) -> bool {
    let kind = |name: &str| dir.join(name).symlink_metadata().map(|m| m.file_type());
    kind("HEAD").is_ok_and(|t| t.is_file())
        && kind("objects").is_ok_and(|t| t.is_dir())
        && kind("refs").is_ok_and(|t| t.is_dir())
}

/// The git folders a `.git` stands for: itself, or the folder its `gitdir:` names, and the
/// common folder a linked worktree's `commondir` names.
pub fn resolve(dot_git: &Path) -> Vec<PathBuf> {
    let gitdir = if dot_git.is_dir() {
        dot_git.to_path_buf()
    } else {
        let Some(named) = std::fs::read_to_string(dot_git).ok().and_then(|t| {
            let line = t.lines().next()?.strip_prefix("gitdir:")?.trim().to_owned();
            Some(PathBuf::from(line))
        }) else {
            return Vec::new();
        };
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        base.join(named)
    };
    let Ok(gitdir) = gitdir.canonicalize() else {
        return Vec::new();
    };
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .and_then(|c| gitdir.join(c.trim()).canonicalize().ok());
    std::iter::once(gitdir).chain(common).collect()
}

/// Under `commit`: the hooks, config and info of `gitdir` and of its submodules' folders.
fn inner(gitdir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ALWAYS_READ_ONLY
        .iter()
        .map(|n| gitdir.join(n))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    let modules = walkdir::WalkDir::new(gitdir.join("modules"))
        .max_depth(MAX_DEPTH)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir() && e.path().join("HEAD").is_file());
    for m in modules {
        out.extend(
            ALWAYS_READ_ONLY
                .iter()
                .map(|n| m.path().join(n))
                .filter(|p| p.symlink_metadata().is_ok()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_pointer_files_and_nested_repositories_are_found() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap();
        for dir in [".git/hooks", "sub/inner/.git/hooks", "elsewhere/wt-gitdir"] {
            std::fs::create_dir_all(ws.join(dir)).unwrap();
        }
        std::fs::write(ws.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(ws.join("linked")).unwrap();
        std::fs::write(ws.join("linked/.git"), "gitdir: ../elsewhere/wt-gitdir\n").unwrap();
        let roots = [ws.clone()];
        let ro = protected(&roots, GitAccess::ReadOnly);
        for p in [
            ".git",
            "sub/inner/.git",
            "linked/.git",
            "elsewhere/wt-gitdir",
        ] {
            assert!(ro.contains(&ws.join(p)), "{p}: {ro:?}");
        }
        let commit = protected(&roots, GitAccess::Commit);
        assert!(commit.contains(&ws.join(".git/hooks")), "{commit:?}");
        assert!(commit.contains(&ws.join(".git/config")), "{commit:?}");
        assert!(commit.contains(&ws.join("linked/.git")), "{commit:?}");
        assert!(!commit.contains(&ws.join(".git")), "{commit:?}");
    }
}
