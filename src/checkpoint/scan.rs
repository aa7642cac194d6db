//! Which paths may have changed since the last snapshot, found without reading every file
//! or every directory.
//!
//! libgit2's `add_all` walks the whole tree (every directory read, every file's ignore
//! rules resolved) on each snapshot: on 100,000 files that was ~500 ms a call, the cost of
//! the repository rather than of the change. This scan does what git's own index and
//! untracked cache do, in two parts:
//!
//! - every file in the (private) index is `lstat`ed, on all cores, and compared with the
//!   stat data the index holds; a mismatch, a missing file, or an entry whose time is too
//!   close to the last scan to be trusted (git's "racily clean" rule, with a margin for the
//!   kernel's coarse file clock) makes the path a candidate;
//! - every directory that is not ignored is `lstat`ed, and only those whose modification
//!   time moved (a name was added, removed or renamed in it) are read again; a name that
//!   is neither in the index nor ignored is a candidate, and a new directory is walked.
//!
//! The caller re-adds, removes or skips each candidate (see `snapshot.rs`); an unchanged
//! file whose stat data moved is hashed again and gives the same blob. A changed
//! `.gitignore` makes the next scan read every directory (ignore rules may have moved).
//!
//! Why this and not a file-system watch (inotify, e.g. the `notify` crate), measured with
//! `benches/checkpoint_run.sh` on a generated 100,000-file repository (release build, a
//! shared 2-core machine at load ~8.5): this scan took 417 ms a Bash call (median of 30)
//! where `git status` took 498 ms — 0.84 of it, within the bound (at load ~10:
//! 759 against 1,184 ms) — and the next model request waited at most 1 ms for it. A watch would make a call cost its
//! events, but it needs a watch per folder, set up by a walk of every folder at the start
//! (the start snapshot is already the largest cost of a run), runs into
//! `fs.inotify.max_user_watches` on big monorepos, and drops events when its queue
//! overflows, so a scan is still needed behind it. Its gain shows only where calls come
//! faster than scans (a scripted model: 10 Bash calls took 6.1 s with checkpoints against
//! 1.0 s without, each call waiting for the previous one's scan); with a real model's
//! seconds between calls, none. So no watch, until a figure shows scans on the path.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::{Index, IndexEntry, Repository};

use super::Skipped;
use super::refresh::same_stat;
use super::rel_path;
use super::snapshot::is_excluded;

/// Margin for the kernel's coarse file timestamps (a jiffy, up to 10 ms): a file or
/// folder whose time is this close to the previous scan may have changed again within
/// the same tick, unseen by its stat data, so it is looked at again.
const RACY_MARGIN: Duration = Duration::from_millis(50);

/// What the scan keeps between snapshots: the folders it has read and when.
#[derive(Default)]
pub(crate) struct Scan {
    /// Repo-relative folder (`""` for the root) → its stamp when last read.
    dirs: HashMap<String, Stamp>,
    /// Stat data older than this (seconds, nanoseconds since the epoch) is trusted.
    since: (i64, i64),
    /// The next scan reads every folder (first scan, or ignore rules changed).
    full: bool,
    /// No folder has been read yet (the start snapshot came from the run's git status,
    /// `early.rs`): the next scan reads every folder, but nothing asks for it sooner.
    unread: bool,
    /// Untracked folders left out for holding too many files: never walked again.
    skipped_dirs: BTreeMap<String, Skipped>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: (i64, i64),
    ino: u64,
    /// Changed too close to the read to be trusted: read again next time.
    recent: bool,
}

/// What the scan needs to know besides the tree: the index, the rules and the limits.
pub(crate) struct Context<'a> {
    pub repo: &'a Repository,
    pub index: &'a Index,
    pub root: &'a Path,
    pub exclude: &'a [String],
    pub max_dir_files: usize,
}

/// The scan's result: paths to bring up to date.
#[derive(Default)]
pub(crate) struct Found {
    pub paths: BTreeSet<String>,
}

impl Scan {
    /// A scan whose first run reads everything; stat data from before `since` (the
    /// index file's modification time) is trusted.
    pub(crate) fn new(since: SystemTime) -> Scan {
        Scan {
            dirs: HashMap::new(),
            since: minus_margin(epoch(since)),
            full: true,
            unread: false,
            skipped_dirs: BTreeMap::new(),
        }
    }

    /// The start snapshot takes what the run's git status found changed instead of a
    /// scan: the untracked folders it named are walked here (as a scan walks a new
    /// folder), and the first scan after it reads every folder.
    pub(crate) fn seeded(&mut self, cx: &Context<'_>, new_dirs: &[String]) -> Found {
        self.full = false;
        self.unread = true;
        let mut found = Found::default();
        let mut walk = Walk {
            cx,
            dirs: &mut self.dirs,
            skipped: &mut self.skipped_dirs,
            started: epoch(SystemTime::now()),
            found: &mut found,
        };
        for dir in new_dirs {
            if matches!(walk.classify(dir, true), Child::NewDir) {
                walk.new_dir(dir);
            }
        }
        found
    }

    /// The untracked folders left out so far.
    pub(crate) fn skipped_dirs(&self) -> impl Iterator<Item = Skipped> + '_ {
        self.skipped_dirs.values().cloned()
    }

    /// Leaves untracked folder `skipped.path` out from now on: it is not walked again,
    /// nor any folder under it the scan knew.
    pub(crate) fn skip_dir(&mut self, skipped: Skipped) {
        let under = format!("{}/", skipped.path);
        self.dirs
            .retain(|d, _| d != &skipped.path && !d.starts_with(&under));
        self.skipped_dirs.insert(skipped.path.clone(), skipped);
    }

    /// Whether the next scan reads every folder.
    pub(crate) fn reads_everything_next(&self) -> bool {
        self.full
    }

    /// Makes the next scan read every folder.
    pub(crate) fn read_everything_next(&mut self) {
        self.full = true;
    }

    /// The candidates since the previous scan. `skipped` files (left out for their size)
    /// are looked at too, so one that shrinks or goes is noticed.
    pub(crate) fn run(&mut self, cx: &Context<'_>, skipped: &BTreeMap<String, u64>) -> Found {
        let started = epoch(SystemTime::now());
        let mut found = Found {
            paths: stale_entries(cx, self.since),
        };
        found.paths.extend(
            skipped
                .keys()
                .filter(|p| stale_skipped(cx.root, p, skipped))
                .cloned(),
        );
        self.skipped_dirs.retain(|dir, _| {
            rel_path::under(cx.root, dir)
                .symlink_metadata()
                .is_ok_and(|m| m.is_dir())
        });
        let mut walk = Walk {
            cx,
            dirs: &mut self.dirs,
            skipped: &mut self.skipped_dirs,
            started,
            found: &mut found,
        };
        let unread = std::mem::take(&mut self.unread);
        if std::mem::take(&mut self.full) || unread {
            walk.dirs.clear();
            walk.read_dir("", true);
        } else {
            walk.read_changed_dirs();
        }
        self.since = minus_margin(started);
        found
    }
}

/// Index entries whose file may differ from what the index says, checked on all cores.
fn stale_entries(cx: &Context<'_>, since: (i64, i64)) -> BTreeSet<String> {
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
    // Collected so that every thread is started before the first is joined.
    #[allow(clippy::needless_collect)]
    std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(chunk)
            .map(|part| s.spawn(move || stale_in(root, part, since)))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_default())
            .collect()
    })
}

/// Entries the scan can judge by stat data: stage 0, not a submodule, not skip-worktree.
fn checkable(entry: &IndexEntry) -> bool {
    const STAGE: u16 = 0x3000;
    const SKIP_WORKTREE: u16 = 1 << 14;
    entry.mode != 0o160000 && entry.flags & STAGE == 0 && entry.flags_extended & SKIP_WORKTREE == 0
}

fn stale_in(root: &Path, entries: &[IndexEntry], since: (i64, i64)) -> Vec<String> {
    entries
        .iter()
        .filter(|e| entry_stale(root, e, since))
        .map(|e| rel_path::from_bytes(&e.path).into_owned())
        .collect()
}

/// Whether `entry`'s file is gone, of another kind, or may hold other bytes.
fn entry_stale(root: &Path, entry: &IndexEntry, since: (i64, i64)) -> bool {
    let path = std::ffi::OsStr::from_bytes(&entry.path);
    let Ok(meta) = fs::symlink_metadata(root.join(path)) else {
        return true;
    };
    let kind_matches = match entry.mode {
        0o120000 => meta.file_type().is_symlink(),
        0o100755 => meta.is_file() && meta.mode() & 0o111 != 0,
        _ => meta.is_file() && meta.mode() & 0o111 == 0,
    };
    let mtime = (
        i64::from(entry.mtime.seconds()),
        i64::from(entry.mtime.nanoseconds()),
    );
    !kind_matches || !same_stat(entry, &meta) || mtime >= since
}

/// Whether a file skipped for its size has changed size or is gone.
fn stale_skipped(root: &Path, path: &str, skipped: &BTreeMap<String, u64>) -> bool {
    let bytes = fs::symlink_metadata(rel_path::under(root, path))
        .map(|m| m.len())
        .ok();
    bytes != skipped.get(path).copied()
}

/// One scan's walk over folders.
struct Walk<'s, 'c> {
    cx: &'s Context<'c>,
    dirs: &'s mut HashMap<String, Stamp>,
    skipped: &'s mut BTreeMap<String, Skipped>,
    started: (i64, i64),
    found: &'s mut Found,
}

/// What a name in a folder is, for the scan.
enum Child {
    /// Nothing to do: `.git`, excluded, ignored, a nested repository or submodule, or a
    /// file the index already covers.
    Nothing,
    /// A folder the scan reads (it holds indexed files, or is already known).
    TrackedDir,
    /// A folder with nothing indexed in it and not ignored: walked as new.
    NewDir,
    /// A file or symlink that is neither indexed nor ignored.
    NewFile,
}

impl Walk<'_, '_> {
    /// Reads again the known folders whose stamp moved (or was too recent to trust).
    fn read_changed_dirs(&mut self) {
        let known: Vec<(String, Stamp)> = self.dirs.iter().map(|(d, s)| (d.clone(), *s)).collect();
        for (dir, before) in known {
            match stamp_of(&rel_path::under(self.cx.root, &dir), self.started) {
                Some(now)
                    if !before.recent && now.mtime == before.mtime && now.ino == before.ino => {}
                Some(_) => self.read_dir(&dir, false),
                None => {
                    self.dirs.remove(&dir);
                }
            }
        }
    }

    /// Reads `dir` and records its stamp; known subfolders are read only when `deep`
    /// (a full scan), unknown ones always.
    fn read_dir(&mut self, dir: &str, deep: bool) {
        let path = rel_path::under(self.cx.root, dir);
        let Some(stamp) = stamp_of(&path, self.started) else {
            self.dirs.remove(dir);
            return;
        };
        self.dirs.insert(dir.to_owned(), stamp);
        let Ok(read) = fs::read_dir(&path) else {
            return;
        };
        for entry in read.flatten() {
            let rel = join(dir, &rel_path::from_os(&entry.file_name()));
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            match self.classify(&rel, is_dir) {
                Child::Nothing => {}
                Child::TrackedDir if deep || !self.dirs.contains_key(&rel) => {
                    self.read_dir(&rel, deep);
                }
                Child::TrackedDir => {}
                Child::NewDir => self.new_dir(&rel),
                Child::NewFile => {
                    self.found.paths.insert(rel);
                }
            }
        }
    }

    fn classify(&self, rel: &str, is_dir: bool) -> Child {
        let cx = self.cx;
        let special = rel.ends_with("/.git") || rel == ".git" || self.skipped.contains_key(rel);
        if special || is_excluded(Path::new(rel), cx.exclude) {
            return Child::Nothing;
        }
        if !is_dir {
            let indexed = cx.index.get_path(&rel_path::os(rel), 0).is_some();
            let ignored = || cx.repo.is_path_ignored(rel_path::os(rel)).unwrap_or(false);
            return if indexed || ignored() {
                Child::Nothing
            } else {
                Child::NewFile
            };
        }
        let submodule = cx
            .index
            .get_path(&rel_path::os(rel), 0)
            .is_some_and(|e| e.mode == 0o160000);
        if submodule || rel_path::under(cx.root, rel).join(".git").exists() {
            return Child::Nothing;
        }
        if self.dirs.contains_key(rel) || has_indexed_under(cx.index, rel) {
            return Child::TrackedDir;
        }
        if cx.repo.is_path_ignored(rel_path::os(rel)).unwrap_or(false) {
            Child::Nothing
        } else {
            Child::NewDir
        }
    }

    /// A folder with nothing indexed in it: its files become candidates and its folders
    /// known, unless it holds more than the limit of files, then it is left out whole.
    fn new_dir(&mut self, rel: &str) {
        let mut seen = NewTree::default();
        if self.collect(rel, &mut seen) {
            for (dir, stamp) in seen.dirs {
                self.dirs.insert(dir, stamp);
            }
            self.found.paths.extend(seen.files);
        } else {
            let skipped = Skipped {
                path: rel.to_owned(),
                bytes: seen.bytes,
                files: Some(seen.files.len()),
                reason: None,
            };
            self.skipped.insert(rel.to_owned(), skipped);
        }
    }

    /// Walks new folder `rel` into `seen`; false once it holds more files than allowed.
    fn collect(&self, rel: &str, seen: &mut NewTree) -> bool {
        let path = rel_path::under(self.cx.root, rel);
        let (Some(stamp), Ok(read)) = (stamp_of(&path, self.started), fs::read_dir(&path)) else {
            return true;
        };
        seen.dirs.push((rel.to_owned(), stamp));
        for entry in read.flatten() {
            let child = join(rel, &rel_path::from_os(&entry.file_name()));
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            match self.classify(&child, is_dir) {
                Child::Nothing => {}
                Child::TrackedDir | Child::NewDir => {
                    if !self.collect(&child, seen) {
                        return false;
                    }
                }
                Child::NewFile => {
                    seen.bytes += entry.metadata().map_or(0, |m| m.len());
                    seen.files.push(child);
                    if seen.files.len() > self.cx.max_dir_files {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// What a walk of a new folder found.
#[derive(Default)]
struct NewTree {
    dirs: Vec<(String, Stamp)>,
    files: Vec<String>,
    bytes: u64,
}

/// Whether any index entry lies under folder `rel`.
fn has_indexed_under(index: &Index, rel: &str) -> bool {
    let prefix = rel_path::os(&format!("{rel}/"));
    index
        .find_prefix(&prefix)
        .ok()
        .and_then(|i| index.get(i))
        .is_some_and(|e| e.path.starts_with(prefix.as_os_str().as_bytes()))
}

fn stamp_of(path: &Path, started: (i64, i64)) -> Option<Stamp> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let mtime = (meta.mtime(), meta.mtime_nsec());
    Some(Stamp {
        mtime,
        ino: meta.ino(),
        recent: mtime >= minus_margin(started),
    })
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

fn epoch(t: SystemTime) -> (i64, i64) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as i64, i64::from(d.subsec_nanos()))
}

fn minus_margin((secs, nanos): (i64, i64)) -> (i64, i64) {
    let total = secs as i128 * 1_000_000_000 + nanos as i128 - RACY_MARGIN.as_nanos() as i128;
    (
        (total.div_euclid(1_000_000_000)) as i64,
        (total.rem_euclid(1_000_000_000)) as i64,
    )
}
