//! `.git` is the run's, not the model's: what in it runs programs or redirects git is
//! recorded when the run starts and put back when it ends.
//!
//! A hook, `core.fsmonitor`, `core.hooksPath`, a `filter.*`/`diff.*` driver that
//! `.gitattributes` names, `core.worktree`, a `commondir` file (git then reads config and
//! hooks from the folder it names) or `objects/info/alternates` planted during a run (by a
//! command with the sandbox off or partial, or a file tool under a rule naming `.git`)
//! would act in the workflow's next `git status`, outside any sandbox, or turn cn-run's own
//! git work (diff, rollback, resume) elsewhere. So at the start cn-run records the
//! repository's `config`, `config.worktree`, `commondir`, `hooks/`, `info/` and the object
//! alternates — of the git directory and of its common directory — into the run folder
//! (`git-start.json`, which commands cannot write), and when the run ends (or a resume
//! starts) it compares and restores them, through descriptors opened without following
//! symlinks, and says what it restored. A config file can hold a credential (a checkout's
//! `extraheader`), and the run folder is often uploaded: the record keeps a config file
//! as the id of a blob written into the repository's own object store, where the same
//! bytes already are in effect, never its text.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::nofollow;

mod fresh;
mod top;

/// What is watched in a git directory.
const WATCHED: &[&str] = &[
    "config",
    "config.worktree",
    // A `commondir` file makes git read config (and hooks) from the folder it names.
    "commondir",
    "hooks",
    "info",
    "objects/info/alternates",
    "objects/info/http-alternates",
];

/// Where the record is kept in the run folder.
pub const RECORD: &str = "git-start.json";

/// One watched path as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entry {
    Absent,
    Dir,
    File {
        mode: u32,
        base64: String,
    },
    /// A config file: its content is the blob `id` of the repository's object store.
    Config {
        mode: u32,
        id: String,
    },
    Link {
        base64: String,
    },
}

/// Config files, kept as blob ids (see the module header).
fn is_config(rel: &str) -> bool {
    rel == "config" || rel == "config.worktree"
}

/// The watched paths of the run's git directories at the start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitGuard {
    /// Git directory → (path relative to it → what it was).
    dirs: BTreeMap<PathBuf, BTreeMap<String, Entry>>,
    /// The git directory whose object store keeps the config files' blobs (absent in a
    /// record of an older cn-run: each directory's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    store: Option<PathBuf>,
    /// The folder searched for nested repositories (absent in an older record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tree: Option<PathBuf>,
    /// What the work tree's own `.git` was (absent in an older record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    top: Option<top::Top>,
}

impl GitGuard {
    /// Records the repository of `workspace` (its git and common directory) and every
    /// repository nested in its work tree (their git directories, submodules' under
    /// `modules/`, linked worktrees') as they are now; `None` outside a repository.
    pub fn take(workspace: &Path) -> Option<GitGuard> {
        let repo = git2::Repository::discover(workspace).ok()?;
        let mut roots = vec![repo.path().canonicalize().ok()?];
        let store = roots.first().cloned();
        if let Ok(common) = repo.commondir().canonicalize()
            && !roots.contains(&common)
        {
            roots.push(common);
        }
        let tree = repo
            .workdir()
            .and_then(|w| w.canonicalize().ok())
            .unwrap_or_else(|| workspace.to_path_buf());
        let nested: Vec<PathBuf> = crate::sandbox::git_view::git_dirs(&tree)
            .into_iter()
            .chain(
                roots
                    .iter()
                    .flat_map(|r| crate::sandbox::git_view::git_dirs_within(r)),
            )
            .filter(|d| d.starts_with(&tree) || roots.iter().any(|r| d.starts_with(r)))
            .filter(|d| !another_runs_worktree(d, &roots[0]))
            .collect();
        for dir in nested {
            if !roots.contains(&dir) {
                roots.push(dir);
            }
        }
        let dirs: BTreeMap<PathBuf, BTreeMap<String, Entry>> = roots
            .into_iter()
            .filter_map(|d| Some((d.clone(), record(&d).ok()?)))
            .collect();
        // The config files' bytes go into the object store, the record keeps their ids.
        for (dir, entries) in &dirs {
            for (rel, entry) in entries {
                if let Entry::Config { .. } = entry
                    && let Ok(bytes) = std::fs::read(dir.join(rel))
                {
                    repo.blob(&bytes).ok()?;
                }
            }
        }
        Some(GitGuard {
            dirs,
            store,
            top: top::Top::take(&tree),
            tree: Some(tree),
        })
    }

    /// Saves the record into the run folder.
    pub fn save(&self, run_dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        crate::out_file::write_whole(&run_dir.join(RECORD), &[&text])
    }

    /// The record a run saved at its start, if it did.
    pub fn load(run_dir: &Path) -> Option<GitGuard> {
        let text = std::fs::read(run_dir.join(RECORD)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Puts every watched path back as it was; the paths it had to restore
    /// (`<git dir>/<path>`), or why it could not.
    pub fn restore(&self) -> Vec<Result<String, String>> {
        let mut said: Vec<Result<String, String>> = self
            .top
            .as_ref()
            .zip(self.tree.as_ref())
            .and_then(|(top, tree)| top.put_back(tree))
            .into_iter()
            .collect();
        said.extend(self.new_repositories());
        for (dir, start) in &self.dirs {
            let now = match record(dir) {
                Ok(now) => now,
                Err(e) => {
                    said.push(Err(format!("cannot read {}: {e}", dir.display())));
                    continue;
                }
            };
            if &now == start {
                continue;
            }
            let fd = match nofollow::open_dir_abs(dir, false) {
                Ok(fd) => fd,
                Err(e) => {
                    said.push(Err(format!("cannot open {}: {e}", dir.display())));
                    continue;
                }
            };
            for rel in changed(start, &now) {
                let shown = dir.join(&rel).display().to_string();
                let wanted = start.get(&rel).unwrap_or(&Entry::Absent);
                let store = self.store.as_deref().unwrap_or(dir);
                said.push(
                    put_back(&fd, store, &rel, wanted)
                        .map(|()| shown.clone())
                        .map_err(|e| format!("{shown}: {e}")),
                );
            }
        }
        said
    }
}

impl GitGuard {
    /// `.git`s in the work tree that were not there at the start (a repository the run made,
    /// cloned or moved in, or put where another was), and bare repositories likewise (`git
    /// init --bare x`: a later `git --git-dir x` reads its config and runs its hooks): what
    /// in them would act later is taken out ([`fresh`]), and said.
    fn new_repositories(&self) -> Vec<Result<String, String>> {
        let Some(tree) = &self.tree else {
            return Vec::new();
        };
        let mut said = Vec::new();
        let (dot_gits, bare) = crate::sandbox::git_view::git_folders(tree);
        for dot_git in dot_gits {
            let gitdirs = crate::sandbox::git_view::resolve(&dot_git);
            let known = |d: &PathBuf| self.dirs.contains_key(d);
            let is_link = dot_git
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            if gitdirs.is_empty() || (!is_link && gitdirs.iter().all(known)) {
                continue;
            }
            let fresh: Vec<PathBuf> = gitdirs.into_iter().filter(|d| !known(d)).collect();
            said.extend(fresh::neutralise(&dot_git, &fresh, tree));
        }
        for bare in bare {
            let gitdirs = crate::sandbox::git_view::resolve(&bare);
            let fresh: Vec<PathBuf> = gitdirs
                .into_iter()
                .filter(|d| !self.dirs.contains_key(d))
                .collect();
            if !fresh.is_empty() {
                said.extend(fresh::neutralise(&bare, &fresh, tree));
            }
        }
        said
    }
}

/// The paths that differ, parents before children for what is put back, children
/// before parents for what goes.
fn changed(start: &BTreeMap<String, Entry>, now: &BTreeMap<String, Entry>) -> Vec<String> {
    let mut back: Vec<String> = start
        .iter()
        .filter(|(rel, e)| now.get(*rel) != Some(*e))
        .map(|(rel, _)| rel.clone())
        .collect();
    let mut gone: Vec<String> = now
        .keys()
        .filter(|rel| !start.contains_key(*rel))
        .cloned()
        .collect();
    gone.sort_by(|a, b| b.cmp(a));
    back.sort();
    gone.extend(back);
    gone
}

/// Makes `rel` under the git directory open as `fd` what `wanted` says (config blobs from
/// the object store of `store`).
fn put_back(fd: &OwnedFd, store: &Path, rel: &str, wanted: &Entry) -> std::io::Result<()> {
    let path = Path::new(rel);
    let parent = path.parent().unwrap_or(Path::new(""));
    let name = path.file_name().unwrap_or(OsStr::new(rel));
    let dir = nofollow::open_dir_under(fd, parent, true)?;
    let current = nofollow::kind_of(&dir, name)?.map(|(k, _)| k);
    let keep_dir = matches!(wanted, Entry::Dir) && current == Some(rustix::fs::FileType::Directory);
    if current.is_some() && !keep_dir {
        nofollow::remove_tree_in(&dir, name)?;
    }
    match wanted {
        Entry::Absent => Ok(()),
        Entry::Dir if keep_dir => Ok(()),
        Entry::Dir => nofollow::mkdir_in(&dir, name),
        Entry::File { mode, base64 } => {
            nofollow::replace_file(&dir, name, &decode(base64)?, Some(*mode))
        }
        Entry::Config { mode, id } => {
            nofollow::replace_file(&dir, name, &stored_blob(store, id)?, Some(*mode))
        }
        Entry::Link { base64 } => nofollow::symlink_in(&dir, name, &decode(base64)?),
    }
}

/// The bytes of blob `id` from the object store of the repository at `git_dir`.
fn stored_blob(git_dir: &Path, id: &str) -> std::io::Result<Vec<u8>> {
    let repo = git2::Repository::open(git_dir).map_err(std::io::Error::other)?;
    let oid = git2::Oid::from_str(id).map_err(std::io::Error::other)?;
    let blob = repo.find_blob(oid).map_err(std::io::Error::other)?;
    Ok(blob.content().to_vec())
}

fn decode(text: &str) -> std::io::Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(std::io::Error::other)
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The watched paths under git directory `dir` as they are now (nothing followed).
/// Whether `dir` is the git folder of another `--parallel` run's worktree
/// (`<common>/worktrees/cn-run-<id>`, named so by [`crate::worktree`]): the call that runs
/// it makes and removes it, perhaps while this run starts or ends, so a record of it taken
/// half made, or put back half removed, would leave a broken worktree behind. `own` is
/// this run's git folder.
fn another_runs_worktree(dir: &Path, own: &Path) -> bool {
    let in_worktrees = dir
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "worktrees");
    let named = dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("cn-run-"));
    in_worktrees && named && dir != own
}

fn record(dir: &Path) -> std::io::Result<BTreeMap<String, Entry>> {
    let fd = nofollow::open_dir_abs(dir, false)?;
    let mut out = BTreeMap::new();
    for watched in WATCHED {
        let path = Path::new(watched);
        let parent = path.parent().unwrap_or(Path::new(""));
        let name = path.file_name().unwrap_or(OsStr::new(watched));
        match nofollow::open_dir_under(&fd, parent, false) {
            Ok(pd) => add(&pd, name, watched, &mut out)?,
            Err(_) => {
                out.insert((*watched).to_owned(), Entry::Absent);
            }
        }
    }
    Ok(out)
}

/// Adds `name` in `dir` (shown as `rel`) and, for a folder, everything under it.
fn add(
    dir: &OwnedFd,
    name: &OsStr,
    rel: &str,
    out: &mut BTreeMap<String, Entry>,
) -> std::io::Result<()> {
    use rustix::fs::FileType;
    let entry = match nofollow::kind_of(dir, name)? {
        None => Entry::Absent,
        Some((FileType::Directory, _)) => {
            let sub = nofollow::open_dir_under(dir, Path::new(name), false)?;
            for (child, _) in nofollow::entries(&sub)? {
                let child_rel = format!("{rel}/{}", child.to_string_lossy());
                add(&sub, &child, &child_rel, out)?;
            }
            Entry::Dir
        }
        Some((FileType::Symlink, _)) => Entry::Link {
            base64: encode(&nofollow::read_link_in(dir, name)?),
        },
        Some(_) => {
            let mut file = nofollow::open_file(dir, name, false)?;
            let mode = std::os::unix::fs::PermissionsExt::mode(&file.metadata()?.permissions());
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            if is_config(rel) {
                let id = git2::Oid::hash_object(git2::ObjectType::Blob, &bytes)
                    .map_err(std::io::Error::other)?;
                Entry::Config {
                    mode,
                    id: id.to_string(),
                }
            } else {
                Entry::File {
                    mode,
                    base64: encode(&bytes),
                }
            }
        }
    };
    out.insert(rel.to_owned(), entry);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;

    #[test]
    fn planted_hooks_config_and_alternates_are_put_back() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap();
        git2::Repository::init(&ws).unwrap();
        let git = ws.join(".git");
        let config = std::fs::read(git.join("config")).unwrap();
        let guard = GitGuard::take(&ws).unwrap();
        std::fs::write(git.join("hooks/post-checkout"), "#!/bin/sh\ntouch /tmp/x\n").unwrap();
        std::fs::write(git.join("config"), "[core]\n\tfsmonitor = /tmp/evil\n").unwrap();
        std::fs::create_dir_all(git.join("objects/info")).unwrap();
        std::fs::write(git.join("objects/info/alternates"), "/elsewhere/objects\n").unwrap();
        std::fs::remove_dir_all(git.join("info")).unwrap();
        std::os::unix::fs::symlink("/etc", git.join("info")).unwrap();
        let said = guard.restore();
        assert!(said.iter().all(Result::is_ok), "{said:?}");
        assert!(!git.join("hooks/post-checkout").exists());
        assert_eq!(std::fs::read(git.join("config")).unwrap(), config);
        assert!(!git.join("objects/info/alternates").exists());
        assert!(git.join("info").symlink_metadata().unwrap().is_dir());
        assert!(guard.restore().is_empty(), "a second restore found changes");
    }

    #[test]
    fn a_sibling_parallel_runs_removed_worktree_is_not_brought_back() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "x"]);
        let user_wt = tmp.path().canonicalize().unwrap().join("user-wt");
        let add = |path: &Path, branch: &str| {
            git(
                &repo,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    branch,
                    path.to_str().unwrap(),
                ],
            );
        };
        let (mine, sibling) = (
            repo.join(".cn-run/worktrees/r1"),
            repo.join(".cn-run/worktrees/cn-run-r2"),
        );
        add(&mine, "cn-run/r1");
        add(&sibling, "cn-run/r2");
        add(&user_wt, "user");
        let guard = GitGuard::take(&mine).unwrap();
        // The sibling run ends first and its call removes its worktree.
        git(
            &repo,
            &["worktree", "remove", "--force", sibling.to_str().unwrap()],
        );
        // A run in the user's linked worktree plants a program there.
        let user_admin = repo.join(".git/worktrees/user-wt");
        std::fs::write(
            user_admin.join("config.worktree"),
            "[core]\n\tfsmonitor = x\n",
        )
        .unwrap();
        let said = guard.restore();
        assert!(!repo.join(".git/worktrees/cn-run-r2").exists(), "{said:?}");
        assert!(said.iter().all(Result::is_ok), "{said:?}");
        assert!(
            !user_admin.join("config.worktree").exists(),
            "the user's worktree is still watched"
        );
    }
}
