//! Which indexed files may hold other bytes than the index says, judged by their stat data
//! (size, times, inode, owner, mode), as git's own index does: the scan's (`scan.rs`)
//! pass over every file, and over the few with other hard links when the folder watch
//! names the rest (`watch.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::IndexEntry;

use super::refresh::same_stat;
use super::rel_path;
use super::scan::Context;
use super::snapshot::is_excluded;

/// Index entries whose file may differ from what the index says, checked on all cores;
/// and those whose file has other links.
pub(super) fn stale_entries(
    cx: &Context<'_>,
    since: (i64, i64),
) -> (BTreeSet<String>, BTreeSet<String>) {
    let entries: Vec<IndexEntry> = cx
        .index
        .iter()
        .filter(|e| {
            checkable(e) && !is_excluded(Path::new(&*rel_path::from_bytes(&e.path)), cx.exclude)
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let chunk = entries.len().div_ceil(threads).max(1);
    let root = cx.root;
    let (mut stale, mut linked) = (BTreeSet::new(), BTreeSet::new());
    // Collected so that every thread is started before the first is joined.
    #[allow(clippy::needless_collect)]
    std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(chunk)
            .map(|part| s.spawn(move || stale_in(root, part, since)))
            .collect();
        for (part_stale, part_linked) in parts.into_iter().filter_map(|p| p.join().ok()) {
            stale.extend(part_stale);
            linked.extend(part_linked);
        }
    });
    (stale, linked)
}

/// Of the index entries at `paths`, those whose file may differ from what the index says.
pub(super) fn stale_of(
    cx: &Context<'_>,
    paths: &BTreeSet<String>,
    since: (i64, i64),
) -> BTreeSet<String> {
    paths
        .iter()
        .filter(|p| {
            cx.index
                .get_path(&rel_path::os(p), 0)
                .is_none_or(|e| !checkable(&e) || entry_stale(cx.root, &e, since))
        })
        .cloned()
        .collect()
}

/// Entries the scan can judge by stat data: stage 0, not a submodule, not skip-worktree.
pub(super) fn checkable(entry: &IndexEntry) -> bool {
    const STAGE: u16 = 0x3000;
    const SKIP_WORKTREE: u16 = 1 << 14;
    entry.mode != 0o160000 && entry.flags & STAGE == 0 && entry.flags_extended & SKIP_WORKTREE == 0
}

/// Of `entries`, those whose file may differ, and those whose file has other links.
fn stale_in(root: &Path, entries: &[IndexEntry], since: (i64, i64)) -> (Vec<String>, Vec<String>) {
    let (mut stale, mut linked) = (Vec::new(), Vec::new());
    for entry in entries {
        let path = std::ffi::OsStr::from_bytes(&entry.path);
        let meta = fs::symlink_metadata(root.join(path)).ok();
        let rel = || rel_path::from_bytes(&entry.path).into_owned();
        if meta.as_ref().is_some_and(|m| m.nlink() > 1) {
            linked.push(rel());
        }
        if meta.is_none_or(|m| is_stale(entry, &m, since)) {
            stale.push(rel());
        }
    }
    (stale, linked)
}

/// Whether `entry`'s file is gone, of another kind, or may hold other bytes.
fn entry_stale(root: &Path, entry: &IndexEntry, since: (i64, i64)) -> bool {
    let path = std::ffi::OsStr::from_bytes(&entry.path);
    fs::symlink_metadata(root.join(path)).map_or(true, |meta| is_stale(entry, &meta, since))
}

/// Whether `entry`'s file, whose stat data is `meta`, is of another kind or may hold
/// other bytes.
fn is_stale(entry: &IndexEntry, meta: &fs::Metadata, since: (i64, i64)) -> bool {
    let kind_matches = match entry.mode {
        0o120000 => meta.file_type().is_symlink(),
        0o100755 => meta.is_file() && meta.mode() & 0o111 != 0,
        _ => meta.is_file() && meta.mode() & 0o111 == 0,
    };
    let mtime = (
        i64::from(entry.mtime.seconds()),
        i64::from(entry.mtime.nanoseconds()),
    );
    !kind_matches || !same_stat(entry, meta) || mtime >= since
}
