//! What the files a tool is about to write held, captured before it writes them, so that
//! the tool need not wait for the start snapshot (issue 38).
//!
//! A new run's start snapshot walks the whole workspace (on 100,000 files, hundreds of
//! milliseconds) and is taken on its own thread once a tool call comes. A turn whose
//! changes are all named files (Write, Edit, MultiEdit) does not wait for it: each named
//! file's content (or its absence) is stored as a git blob first — what the tool will
//! change, not the tree — and when the start snapshot's walk is done, those files are put
//! back in its tree as they were captured, whatever the walk read of them. A capture is
//! taken only while the start snapshot is still open; once the walk is closed, later
//! turns wait for the snapshot as before. The captures are also written to the run folder
//! ([`RECORD`]) before the tool writes, so a run killed before its start snapshot is
//! committed gets the same start when it is resumed (its diff stays whole); the record is
//! removed once the start snapshot is committed.

use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use git2::{IndexEntry, IndexTime, Oid};
use serde::{Deserialize, Serialize};

use super::error::{CheckpointError, git};
use super::rel_path;
use super::snapshot::{Snapshotter, is_excluded};
use super::touch::Change;

/// The record of the captures in the run folder, while the start snapshot is open.
pub(super) const RECORD: &str = "checkpoint-start-captures.json";

/// One file as it was before the run's first change to it: its blob and mode, or `None`
/// when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Captured {
    /// Repository-relative (see `rel_path`).
    pub(super) path: String,
    pub(super) blob: Option<String>,
    pub(super) mode: u32,
}

/// The captures of a new run's start snapshot, shared by the tools' side and the
/// checkpoint thread.
#[derive(Default)]
pub(super) struct Prior {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The repository (git folder, working tree) once the checkpoint thread has it open.
    repo: Option<(PathBuf, PathBuf)>,
    /// A handle of the tools' side (its own, not the checkpoint thread's).
    handle: Option<git2::Repository>,
    /// No attribute or `core.autocrlf` can filter a file on its way into git: a blob is
    /// the plain hash of the file's bytes, found without loading the index (libgit2's
    /// attribute lookup for a path loads it: ~300 ms on 100,000 files under load).
    plain: bool,
    /// The run folder, where the record goes; `None` before the run is bound.
    out_dir: Option<PathBuf>,
    limit: u64,
    captured: Vec<Captured>,
    /// The start snapshot's walk is done: captures come too late for it.
    closed: bool,
}

impl Prior {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The checkpoint thread has the repository open (its git folder and working tree):
    /// the tools' side gets a handle of its own now, off the tools' path.
    pub(super) fn opened(&self, repo: &git2::Repository) {
        let Some(root) = repo.workdir() else {
            return;
        };
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let plain = repo
            .index()
            .is_ok_and(|index| !super::refresh::filters_may_apply(repo, &index, &root));
        let handle = git2::Repository::open_bare(repo.path())
            .ok()
            .filter(|h| h.set_workdir(&root, false).is_ok());
        let mut state = self.lock();
        state.repo = Some((repo.path().to_path_buf(), root));
        state.handle = handle;
        state.plain = plain;
    }

    /// The run is bound: its folder and the size over which an untracked file is not
    /// snapshotted (such a file is not captured; its turn waits).
    pub(super) fn bind(&self, out_dir: &Path, limit: u64) {
        let mut state = self.lock();
        state.out_dir = Some(out_dir.to_path_buf());
        state.limit = limit;
    }

    /// Captures `paths` (absolute, as the tools resolve them) for the start snapshot.
    /// True when every one is captured and recorded: the tool may write them without
    /// waiting. False when the start snapshot is closed, or a path cannot be captured.
    pub(super) fn capture(&self, paths: &[PathBuf]) -> bool {
        let mut state = self.lock();
        if state.closed || state.out_dir.is_none() || paths.is_empty() {
            return false;
        }
        let mut added = false;
        for path in paths {
            match state.capture_one(path) {
                Some(Some(c)) => {
                    state.captured.push(c);
                    added = true;
                }
                Some(None) => {}
                None => return false,
            }
        }
        !added || state.record()
    }

    /// The start snapshot's walk is done: the captures so far, and no more.
    pub(super) fn close(&self) -> Vec<Captured> {
        let mut state = self.lock();
        state.closed = true;
        std::mem::take(&mut state.captured)
    }

    /// The start snapshot is committed: the record is no longer needed.
    pub(super) fn committed(&self) {
        if let Some(out) = &self.lock().out_dir {
            forget(out);
        }
    }
}

impl State {
    /// One path's capture: `Some(None)` when there is nothing to capture (outside the
    /// working tree, or captured already), `None` when it cannot be captured.
    fn capture_one(&mut self, path: &Path) -> Option<Option<Captured>> {
        let (git_dir, root) = self.repo.clone()?;
        let Ok(rel) = path.strip_prefix(&root) else {
            return Some(None);
        };
        let rel = rel_path::from_os(rel.as_os_str()).into_owned();
        let odd = |c: &str| c.is_empty() || c == "." || c == ".." || c == ".git";
        if rel.split('/').any(odd) {
            return None;
        }
        if self.captured.iter().any(|c| c.path == rel) {
            return Some(None);
        }
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(Some(Captured {
                    path: rel,
                    blob: None,
                    mode: 0,
                }));
            }
            Err(_) => return None,
        };
        let mode = if meta.file_type().is_symlink() {
            0o120000
        } else if !meta.is_file() || meta.len() > self.limit {
            return None;
        } else if meta.permissions().mode() & 0o111 != 0 {
            0o100755
        } else {
            0o100644
        };
        if self.handle.is_none() {
            let repo = git2::Repository::open_bare(&git_dir).ok()?;
            repo.set_workdir(&root, false).ok()?;
            self.handle = Some(repo);
        }
        // The blob the index would hold for it: a link's target (libgit2's `blob_path`
        // would resolve the link and store the file it points to), a file's bytes with
        // the repository's filters applied.
        // Read beneath the work tree through descriptors, never a file a contained command
        // could not read (cn-run as root): that is left to the start snapshot, which
        // leaves it out.
        let handle = self.handle.as_ref()?;
        let blob = if mode == 0o120000 {
            crate::tools::unseen::closed_to_capless_root(path, &root)
                .is_none()
                .then_some(())?;
            handle
                .blob(std::fs::read_link(path).ok()?.as_os_str().as_bytes())
                .ok()?
        } else {
            let bytes = super::beneath::read_seen(&root, &rel_path::os(&rel))?;
            if self.plain {
                handle.blob(&bytes).ok()?
            } else {
                let mut writer = handle.blob_writer(Some(&rel_path::os(&rel))).ok()?;
                std::io::Write::write_all(&mut writer, &bytes).ok()?;
                writer.commit().ok()?
            }
        };
        Some(Some(Captured {
            path: rel,
            blob: Some(blob.to_string()),
            mode,
        }))
    }

    /// Writes the captures to the run folder, whole (the run files' one writer).
    fn record(&self) -> bool {
        let Some(out) = &self.out_dir else {
            return false;
        };
        let Ok(text) = serde_json::to_vec(&self.captured) else {
            return false;
        };
        crate::out_file::write_whole(&out.join(RECORD), &[&text]).is_ok()
    }
}

/// Removes the record from `out_dir` (the start snapshot it was for is committed).
pub(super) fn forget(out_dir: &Path) {
    let _ = std::fs::remove_file(out_dir.join(RECORD));
}

/// The captures a killed run recorded in `out_dir` (none when there is no record).
pub(super) fn recorded(out_dir: &Path) -> Vec<Captured> {
    std::fs::read(out_dir.join(RECORD))
        .ok()
        .and_then(|text| serde_json::from_slice(&text).ok())
        .unwrap_or_default()
}

impl Snapshotter {
    /// `tree` (the start snapshot as the walk read it) with each captured file as it was
    /// captured; the private index is made to hold the same, with stat data that matches no
    /// file, so the next snapshot reads those files again.
    pub(super) fn with_prior(
        &mut self,
        tree: Oid,
        captured: &[Captured],
    ) -> Result<Oid, CheckpointError> {
        let mut index = self.repo.index().map_err(git("open the private index"))?;
        let base = self
            .repo
            .find_tree(tree)
            .map_err(git("read the start tree"))?;
        let mut changes = Vec::new();
        for c in captured {
            if is_excluded(Path::new(&c.path), &self.exclude) {
                continue;
            }
            let os = rel_path::os(&c.path);
            let walked = base.get_path(&os).ok();
            let walked = walked.map(|e| (e.id(), e.filemode() as u32));
            self.skipped_files.remove(&c.path);
            let Some(blob) = c.blob.as_deref().and_then(|b| Oid::from_str(b).ok()) else {
                if walked.is_some() {
                    index
                        .remove_path(&os)
                        .map_err(git("remove a path from the private index"))?;
                    changes.push(Change::Remove(c.path.clone()));
                }
                continue;
            };
            // Captured in another clone (a moved run): not here to put back.
            if !self.repo.odb().is_ok_and(|odb| odb.exists(blob)) {
                continue;
            }
            let mode = self.captured_mode(c.mode, walked.map(|w| w.1));
            if walked == Some((blob, mode)) {
                continue;
            }
            let tracked = self.tracked.contains(&*rel_path::bytes(&c.path));
            if walked.is_none() && !tracked && self.repo.is_path_ignored(&os).unwrap_or(false) {
                continue;
            }
            index
                .add(&unstatted(&c.path, blob, mode))
                .map_err(git("add a captured file to the private index"))?;
            changes.push(Change::Upsert(
                c.path.clone(),
                blob,
                super::touch::mode(mode),
            ));
        }
        if changes.is_empty() {
            return Ok(tree);
        }
        let updated = match self.updated_tree(tree, &changes) {
            Ok(t) => t,
            Err(_) => index.write_tree().map_err(git("write a snapshot tree"))?,
        };
        self.current = Some(updated);
        Ok(updated)
    }

    /// The mode to keep for a captured file: its own, unless the repository ignores
    /// executable bits (`core.filemode = false`) and the walk had it as a file.
    fn captured_mode(&self, captured: u32, walked: Option<u32>) -> u32 {
        let trusts_modes = self
            .repo
            .config()
            .and_then(|c| c.get_bool("core.filemode"))
            .unwrap_or(true);
        match walked {
            Some(m @ (0o100644 | 0o100755)) if !trusts_modes && captured != 0o120000 => m,
            _ => captured,
        }
    }
}

/// An index entry for `rel` holding `blob`, with stat data no file has.
fn unstatted(rel: &str, blob: Oid, mode: u32) -> IndexEntry {
    let path = rel_path::bytes(rel).into_owned();
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: blob,
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path,
    }
}

#[cfg(test)]
#[path = "prior_tests.rs"]
mod tests;
