//! Bringing named paths up to date in the private index and the snapshot tree.
//!
//! Each path is looked at once: gone (or now a folder) → removed; an untracked file over
//! the size limit → left out and listed; otherwise re-added (libgit2 hashes it, with the
//! repository's filters). The new tree is the previous one with just those paths
//! replaced (`git_tree_create_updated`): it writes the folders on the way to each path
//! and reads nothing else, where `git_index_write_tree` would read back the whole tree
//! to rebuild its cache. The first tree of a snapshotter, and any update libgit2 refuses,
//! is written from the whole index instead. A path whose folder on the way is a symlink
//! (beyond a symbolic link, in git's words) is taken as gone and never read.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Index, Oid};

use super::error::{CheckpointError, git};
use super::rel_path;
use super::snapshot::{Checked, Snapshotter};

/// One path's outcome in the tree.
pub(super) enum Change {
    Upsert(String, Oid, FileMode),
    Remove(String),
}

impl Snapshotter {
    /// Updates the index for `paths` and returns the tree it now holds.
    pub(super) fn apply(
        &mut self,
        mut index: Index,
        paths: &BTreeSet<String>,
        checked: Checked,
    ) -> Result<Oid, CheckpointError> {
        let mut changes: Vec<Change> = self.dropped_dirs.drain(..).map(Change::Remove).collect();
        for rel in paths {
            let Some(change) = self.update(&mut index, rel, checked)? else {
                continue;
            };
            changes.push(change);
            // Ignore rules moved: what they cover now is for a scan of every folder.
            if rel == ".gitignore" || rel.ends_with("/.gitignore") {
                self.scan.read_everything_next();
            }
        }
        let whole = |index: &mut Index| {
            index.write_tree().map_err(|e| {
                super::error::explained(self.repo.path(), git("write a snapshot tree")(e))
            })
        };
        self.updated = None;
        let tree = match self.current {
            Some(base) if changes.is_empty() => base,
            Some(base) => match self.updated_tree(base, &changes) {
                Ok(tree) => {
                    self.updated = Some(Updated::of(base, tree, &changes));
                    tree
                }
                Err(_) => whole(&mut index)?,
            },
            None => whole(&mut index)?,
        };
        self.current = Some(tree);
        Ok(tree)
    }

    /// How many files differ between `from` and `to`: counted on the paths the last
    /// update replaced when it turned `from` into `to` (no walk of either tree), else by
    /// a diff of the two trees.
    pub(super) fn files_between(&self, from: Oid, to: Oid) -> Result<usize, CheckpointError> {
        match &self.updated {
            Some(u) if u.base == from && u.tree == to => u.count(&self.repo),
            _ => None,
        }
        .map_or_else(|| super::diff::count_changes(&self.repo, from, to), Ok)
    }

    /// Brings one path up to date in the index; what changed in the tree, if anything.
    fn update(
        &mut self,
        index: &mut Index,
        rel: &str,
        checked: Checked,
    ) -> Result<Option<Change>, CheckpointError> {
        let os = rel_path::os(rel);
        let path = os.as_path();
        let indexed = index.get_path(path, 0);
        // A path beyond a symlink (a folder swapped for a link out of the tree) is not in
        // the tree, as git itself says: it is never read.
        let inside = beneath_no_link(self.root()?, path);
        let meta = inside
            .then(|| self.root().ok()?.join(path).symlink_metadata().ok())
            .flatten();
        let kept = meta.filter(|m| m.is_file() || m.file_type().is_symlink());
        let Some(meta) = kept else {
            self.skipped_files.remove(rel);
            return remove(index, rel, indexed.is_some());
        };
        if indexed.is_none()
            && checked == Checked::Nothing
            && self.repo.is_path_ignored(path).unwrap_or(false)
        {
            return Ok(None);
        }
        let untracked = !self.tracked.contains(path.as_os_str().as_bytes());
        if meta.is_file() && untracked && meta.len() > self.limits.max_file_bytes {
            self.skipped_files.insert(rel.to_owned(), meta.len());
            return remove(index, rel, indexed.is_some());
        }
        self.skipped_files.remove(rel);
        // Read through the descriptors checked, not by path again (`beneath`).
        let root = self.root()?.to_path_buf();
        use super::beneath::Added;
        match super::beneath::add(&self.repo, index, &root, path) {
            Ok(Added::Yes) => {}
            Ok(Added::Absent) => return remove(index, rel, indexed.is_some()),
            // Closed to contained commands: never stored; a tracked one keeps what the
            // repository already holds.
            Ok(Added::Unseen) => {
                self.unseen.insert(rel.to_owned());
                return Ok(None);
            }
            Err(e) => return self.not_added(index, rel, indexed.is_some(), e),
        }
        self.unseen.remove(rel);
        self.unreadable.remove(rel);
        let Some(now) = index.get_path(path, 0) else {
            return Ok(None);
        };
        let same = indexed.is_some_and(|e| e.id == now.id && e.mode == now.mode);
        Ok((!same).then(|| Change::Upsert(rel.to_owned(), now.id, mode(now.mode))))
    }

    /// A file libgit2 could not add: gone since (removed from the snapshot), unreadable
    /// (kept as the snapshot had it, and named with why), or a file whose content could not
    /// be stored (an error naming the cause: the git directory cannot be written).
    fn not_added(
        &mut self,
        index: &mut Index,
        rel: &str,
        indexed: bool,
        e: git2::Error,
    ) -> Result<Option<Change>, CheckpointError> {
        let full = self.root()?.join(rel_path::os(rel));
        let meta = if let Ok(meta) = full.symlink_metadata() {
            meta
        } else {
            self.unreadable.remove(rel);
            return remove(index, rel, indexed);
        };
        let read = if meta.file_type().is_symlink() {
            std::fs::read_link(&full).map(drop)
        } else {
            std::fs::File::open(&full).map(drop)
        };
        if let Err(why) = read {
            self.unreadable
                .insert(rel.to_owned(), format!("cannot be read: {why}"));
            return Ok(None);
        }
        Err(super::error::explained(
            self.repo.path(),
            git("add a file to the snapshot")(e),
        ))
    }

    /// `base` with `changes` applied: removals first, so a file that became a folder
    /// (or the reverse) never meets its old self.
    pub(super) fn updated_tree(&self, base: Oid, changes: &[Change]) -> Result<Oid, git2::Error> {
        let mut removals = TreeUpdateBuilder::new();
        let mut any_removal = false;
        let base_tree = self.repo.find_tree(base)?;
        for change in changes {
            if let Change::Remove(rel) = change
                && base_tree.get_path(&rel_path::os(rel)).is_ok()
            {
                removals.remove(rel_path::os(rel));
                any_removal = true;
            }
        }
        let pruned = if any_removal {
            removals.create_updated(&self.repo, &base_tree)?
        } else {
            base
        };
        let mut upserts = TreeUpdateBuilder::new();
        let mut any_upsert = false;
        for change in changes {
            if let Change::Upsert(rel, id, mode) = change {
                upserts.upsert(rel_path::os(rel), *id, *mode);
                any_upsert = true;
            }
        }
        if !any_upsert {
            return Ok(pruned);
        }
        let pruned_tree = self.repo.find_tree(pruned)?;
        upserts.create_updated(&self.repo, &pruned_tree)
    }
}

/// The last update of the tree made from the previous one with some paths replaced.
pub(super) struct Updated {
    base: Oid,
    tree: Oid,
    paths: Vec<String>,
}

impl Updated {
    fn of(base: Oid, tree: Oid, changes: &[Change]) -> Updated {
        let paths = changes
            .iter()
            .map(|c| match c {
                Change::Upsert(rel, ..) | Change::Remove(rel) => rel.clone(),
            })
            .collect();
        Updated { base, tree, paths }
    }

    /// How many of the paths differ between the two trees; `None` when a path named a
    /// folder on either side (a folder left out, or a file that became one): then a diff
    /// counts the files in it.
    fn count(&self, repo: &git2::Repository) -> Option<usize> {
        let (base, tree) = (
            repo.find_tree(self.base).ok()?,
            repo.find_tree(self.tree).ok()?,
        );
        let mut count = 0;
        for rel in &self.paths {
            let os = rel_path::os(rel);
            let entry = |t: &git2::Tree<'_>| t.get_path(&os).ok().map(|e| (e.id(), e.filemode()));
            let (before, after) = (entry(&base), entry(&tree));
            let folder = |e: &Option<(Oid, i32)>| e.is_some_and(|(_, m)| m == 0o040000);
            if folder(&before) || folder(&after) {
                return None;
            }
            count += usize::from(before != after);
        }
        Some(count)
    }
}

/// Whether every folder on the way from `root` to `rel` is a real folder (no symlink).
fn beneath_no_link(root: &Path, rel: &Path) -> bool {
    let parent = rel.parent().unwrap_or(Path::new(""));
    crate::nofollow::open_dir_abs(root, false)
        .and_then(|fd| crate::nofollow::open_dir_under(&fd, parent, false))
        .is_ok()
}

fn remove(index: &mut Index, rel: &str, indexed: bool) -> Result<Option<Change>, CheckpointError> {
    if !indexed {
        return Ok(None);
    }
    index
        .remove_path(&rel_path::os(rel))
        .map_err(git("remove a path from the private index"))?;
    Ok(Some(Change::Remove(rel.to_owned())))
}

pub(super) fn mode(raw: u32) -> FileMode {
    match raw {
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        0o160000 => FileMode::Commit,
        _ => FileMode::Blob,
    }
}
