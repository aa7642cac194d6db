//! Untracked folders that grow past the file-count limit after a snapshot took them in.
//!
//! The scan leaves out a new folder that holds more than `max_dir_files` files when it
//! first meets it (see `scan.rs`). A folder first met with fewer — `npm install` of one
//! package, then of fifty; a build's first step, then the rest — is taken in and then
//! read as a known folder, file by file, and would grow without limit. So the new files
//! a scan finds are grouped by their untracked root (the topmost folder holding no file
//! that was tracked when the run started), and a root that now holds more files than the
//! limit is left out from then on: its files leave the private index and the tree, and it
//! is listed as skipped. The count reads the private index under that root only, so it
//! costs what the folder holds, not the repository.

use std::collections::{BTreeMap, BTreeSet};

use git2::Index;

use super::Skipped;
use super::error::{CheckpointError, git};
use super::rel_path;
use super::snapshot::Snapshotter;

impl Snapshotter {
    /// `paths` (a scan's candidates) without those in untracked folders that now hold
    /// more files than the limit; such folders are left out from now on.
    pub(super) fn skip_grown_dirs(
        &mut self,
        index: &mut Index,
        mut paths: BTreeSet<String>,
    ) -> Result<BTreeSet<String>, CheckpointError> {
        let mut roots: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for path in &paths {
            if let Some(root) = self.untracked_root(path) {
                roots.entry(root).or_default().push(path.clone());
            }
        }
        for (root, new) in roots {
            let Some(skipped) = self.over_limit(index, &root, &new) else {
                continue;
            };
            let under = format!("{root}/");
            paths.retain(|p| !p.starts_with(&under));
            if has_entries_under(index, &under) {
                index
                    .remove_dir(&rel_path::os(&root), 0)
                    .map_err(git("remove a folder from the private index"))?;
                self.dropped_dirs.push(root);
            }
            self.scan.skip_dir(skipped);
        }
        Ok(paths)
    }

    /// The topmost folder of untracked `path` that held no tracked file at the start,
    /// if the path is in a folder and not tracked itself.
    fn untracked_root(&self, path: &str) -> Option<String> {
        if self.tracked.contains(&*rel_path::bytes(path)) {
            return None;
        }
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            let prefix = format!("{}/", &path[..end]);
            if !holds_any(&self.tracked, &rel_path::bytes(&prefix)) {
                return Some(path[..end].to_owned());
            }
            end += 1;
        }
        None
    }

    /// The skipped entry for folder `root` if the files the index holds under it and the
    /// `new` files found in it are more than the limit.
    fn over_limit(&self, index: &Index, root: &str, new: &[String]) -> Option<Skipped> {
        let under = format!("{root}/");
        let mut files: BTreeSet<String> = index_paths_under(index, &under);
        let workdir = self.repo.workdir()?;
        for path in new {
            let kept = rel_path::under(workdir, path)
                .symlink_metadata()
                .is_ok_and(|m| m.is_file() || m.file_type().is_symlink());
            if kept {
                files.insert(path.clone());
            }
        }
        if files.len() <= self.limits.max_dir_files {
            return None;
        }
        let bytes = files
            .iter()
            .filter_map(|f| rel_path::under(workdir, f).symlink_metadata().ok())
            .map(|m| m.len())
            .sum();
        Some(Skipped {
            path: root.to_owned(),
            bytes,
            files: Some(files.len()),
            reason: None,
        })
    }
}

/// Whether sorted set `set` holds a path starting with `prefix`.
fn holds_any(set: &BTreeSet<Vec<u8>>, prefix: &[u8]) -> bool {
    set.range(prefix.to_vec()..)
        .next()
        .is_some_and(|p| p.starts_with(prefix))
}

/// The paths the index holds under folder prefix `under` (ending in `/`).
fn index_paths_under(index: &Index, under: &str) -> BTreeSet<String> {
    let Ok(start) = index.find_prefix(rel_path::os(under)) else {
        return BTreeSet::new();
    };
    (start..index.len())
        .map_while(|i| index.get(i))
        .map(|e| rel_path::from_bytes(&e.path).into_owned())
        .take_while(|p| p.starts_with(under))
        .collect()
}

fn has_entries_under(index: &Index, under: &str) -> bool {
    index
        .find_prefix(rel_path::os(under))
        .ok()
        .and_then(|i| index.get(i))
        .is_some_and(|e| e.path.starts_with(&rel_path::bytes(under)))
}
