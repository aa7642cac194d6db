//! The work tree's own `.git` entry, put back when the run replaced it: a `.git` folder
//! swapped for a symbolic link, a `gitdir:` file or another folder would send the workflow's
//! next `git status` (and cn-run's own git work) wherever the run chose.
//!
//! At the start the record keeps what `.git` was: a folder (its device and inode, so the
//! same folder is found again wherever in the work tree the run moved it) or a pointer file
//! (its bytes). At the end, if `.git` is something else, the replacement is moved aside
//! (`.git.cn-run-disabled`) and the folder renamed back, or the pointer file written back.
//! A folder deleted, or moved out of the work tree, cannot come back: that is said.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// How deep in the work tree a moved `.git` folder is looked for.
const SEARCH_DEPTH: usize = 6;
/// How many entries the search reads at most.
const SEARCH_ENTRIES: usize = 200_000;

/// What the work tree's `.git` was at the start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Top {
    Dir { dev: u64, ino: u64 },
    File { base64: String },
}

impl Top {
    /// The `.git` of `tree` now (`None`: none, or neither a folder nor a file).
    pub(super) fn take(tree: &Path) -> Option<Top> {
        let dot_git = tree.join(".git");
        let meta = dot_git.symlink_metadata().ok()?;
        if meta.is_dir() {
            return Some(Top::Dir {
                dev: meta.dev(),
                ino: meta.ino(),
            });
        }
        let bytes = meta
            .is_file()
            .then(|| std::fs::read(&dot_git).ok())
            .flatten()?;
        Some(Top::File {
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }

    /// Put the `.git` of `tree` back as it was; `None` when it is unchanged.
    pub(super) fn put_back(&self, tree: &Path) -> Option<Result<String, String>> {
        if Top::take(tree).as_ref() == Some(self) {
            return None;
        }
        let dot_git = tree.join(".git");
        let aside = match dot_git.symlink_metadata() {
            Ok(_) => match super::fresh::move_aside(&dot_git) {
                Ok(a) => Some(a),
                Err(e) => return Some(Err(format!("{e} (replaced during the run)"))),
            },
            Err(_) => None,
        };
        let moved = aside
            .map(|a| format!("; what stood there is moved aside to {}", a.display()))
            .unwrap_or_default();
        let shown = dot_git.display();
        Some(match self {
            Top::Dir { dev, ino } => match find(tree, *dev, *ino) {
                Some(found) => std::fs::rename(&found, &dot_git)
                    .map(|()| {
                        format!(
                            "{shown} was replaced during the run; the repository's own .git \
                             is put back from {}{moved}.",
                            found.display()
                        )
                    })
                    .map_err(|e| format!("{shown}: cannot put back {}: {e}", found.display())),
                None => Err(format!(
                    "{shown} was replaced during the run and the repository's own .git is \
                     gone (deleted, or moved out of the work tree): not put back{moved}."
                )),
            },
            Top::File { base64 } => base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(std::io::Error::other)
                .and_then(|bytes| {
                    let dir = crate::nofollow::open_dir_abs(tree, false)?;
                    let name = std::ffi::OsStr::new(".git");
                    crate::nofollow::replace_file(&dir, name, &bytes, Some(0o644))
                })
                .map(|()| format!("{shown} was replaced during the run; put back{moved}."))
                .map_err(|e| format!("{shown}: cannot put back: {e}")),
        })
    }
}

/// The folder with device `dev` and inode `ino` in `tree` (links not followed).
fn find(tree: &Path, dev: u64, ino: u64) -> Option<PathBuf> {
    walkdir::WalkDir::new(tree)
        .max_depth(SEARCH_DEPTH)
        .follow_links(false)
        .into_iter()
        .take(SEARCH_ENTRIES)
        .flatten()
        .filter(|e| e.file_type().is_dir())
        .find(|e| e.metadata().is_ok_and(|m| m.dev() == dev && m.ino() == ino))
        .map(walkdir::DirEntry::into_path)
}
