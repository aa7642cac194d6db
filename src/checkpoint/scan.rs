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
//! Once a scan has read every folder, each folder it read carries a watch (`watch.rs`):
//! the next scans take the names the kernel reported changed as their candidates and read
//! only the folders created since, instead of `lstat`ing every file and folder; where the
//! events cannot be trusted (or a watch cannot be had) the scan is the one above.
//! Measured with `benches/turns.sh` `bash100k` (10 Bash calls on 100,000 files, each
//! waiting for the previous call's checkpoint): see README.md, "Performance".

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::{Index, Repository};

use super::Skipped;
use super::rel_path;
use super::snapshot::is_excluded;
use super::stale::{checkable, stale_entries, stale_of};
use super::watch::{Events, Watch};

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
    /// The kernel's reports of changed names in the folders read (`None`: none to be had).
    pub(super) watch: Option<Watch>,
    /// Every folder read carries a watch since a scan that read them all: the events name
    /// every change since.
    armed: bool,
    /// The next scan stats every file and reads the folders that changed, whatever the
    /// events say (`check_next`).
    check: bool,
    /// Whether a scan took its candidates from the events.
    used_events: bool,
    /// Files with more than one link (a write through another name is reported in that
    /// name's folder, maybe not watched): stat'ed by every scan.
    linked: BTreeSet<String>,
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
            watch: None,
            armed: false,
            check: false,
            used_events: false,
            linked: BTreeSet::new(),
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
            watch: None,
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

    /// Watches the folders this scan reads from now on (the run's own snapshotter; a
    /// one-off scan, as a rollback's, has no use for it).
    pub(crate) fn watch_folders(&mut self) {
        self.watch = Watch::new();
    }

    /// Makes the next scan stat every file and read the folders that changed, whatever
    /// the events say (the end of a run whose checkpoints trusted them: a change no
    /// folder watch reports is then still in the run's diff).
    pub(crate) fn check_next(&mut self) {
        self.check = true;
    }

    /// Whether a scan so far took its candidates from the events.
    pub(crate) fn used_events(&self) -> bool {
        self.used_events
    }

    /// The candidates since the previous scan. `skipped` files (left out for their size)
    /// are looked at too, so one that shrinks or goes is noticed.
    pub(crate) fn run(&mut self, cx: &Context<'_>, skipped: &BTreeMap<String, u64>) -> Found {
        let started = epoch(SystemTime::now());
        let events = self.trusted_events();
        let mut found = Found::default();
        if events.is_some() {
            found.paths = stale_of(cx, &self.linked, self.since);
        } else {
            (found.paths, self.linked) = stale_entries(cx, self.since);
        }
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
        let full = std::mem::take(&mut self.full) | std::mem::take(&mut self.unread);
        let mut walk = Walk {
            cx,
            dirs: &mut self.dirs,
            skipped: &mut self.skipped_dirs,
            started,
            found: &mut found,
            watch: self.watch.as_mut(),
        };
        match events {
            Some(events) => walk.take_events(events),
            None if full => {
                walk.dirs.clear();
                walk.read_dir("", true);
            }
            None => walk.read_changed_dirs(),
        }
        self.since = minus_margin(started);
        self.after_run(cx.root, &found, full);
        found
    }

    /// The events since the last scan when this scan may take its candidates from them;
    /// `None`: it stats (and reads every folder when they were lost).
    fn trusted_events(&mut self) -> Option<Events> {
        let check = std::mem::take(&mut self.check);
        let drained = self.watch.as_mut()?.drain();
        if drained.is_none() {
            self.full |= self.armed;
            self.armed = false;
        }
        let events = drained.filter(|_| self.armed && !check && !self.full && !self.unread)?;
        self.used_events = true;
        Some(events)
    }

    /// Notes the candidates' links, and whether every folder now carries a watch.
    fn after_run(&mut self, root: &Path, found: &Found, full: bool) {
        for path in &found.paths {
            let links = fs::symlink_metadata(rel_path::under(root, path)).map_or(1, |m| m.nlink());
            if links > 1 {
                self.linked.insert(path.clone());
            } else {
                self.linked.remove(path);
            }
        }
        if self.watch.as_ref().is_some_and(Watch::failed) {
            self.watch = None;
            self.armed = false;
        } else if full && self.watch.is_some() {
            self.armed = true;
        }
    }
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
    /// Where each folder read gets its watch (none: the scan has no watch).
    watch: Option<&'s mut Watch>,
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
    /// Takes the names the events reported as candidates, and walks the folders they
    /// reported created or moved in (as a scan walks a folder it meets the first time).
    fn take_events(&mut self, events: Events) {
        for dir in events.new_dirs {
            let path = rel_path::under(self.cx.root, &dir);
            if !self.listened(&dir) || !path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                self.take_name(dir);
                continue;
            }
            // A file that became this folder leaves the tree.
            self.take_name(dir.clone());
            match self.classify(&dir, true) {
                Child::TrackedDir => self.read_dir(&dir, true),
                Child::NewDir => self.new_dir(&dir),
                Child::Nothing | Child::NewFile => {}
            }
        }
        for name in events.names {
            self.take_name(name);
        }
    }

    /// A name the events reported: a candidate when the index holds it (as a scan judges
    /// by stat data), or when the scan would find it new.
    fn take_name(&mut self, rel: String) {
        if !self.listened(&rel) {
            return;
        }
        let candidate = match self.cx.index.get_path(&rel_path::os(&rel), 0) {
            Some(entry) => checkable(&entry),
            None => matches!(self.classify(&rel, false), Child::NewFile),
        };
        if candidate {
            self.found.paths.insert(rel);
        }
    }

    /// Whether the scan looks at `rel` at all: not in `.git`, excluded or left out.
    fn listened(&self, rel: &str) -> bool {
        let in_git = rel.split('/').any(|c| c == ".git");
        let left_out = self.skipped.keys().any(|d| {
            rel.strip_prefix(d.as_str())
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        });
        !in_git && !left_out && !is_excluded(Path::new(rel), self.cx.exclude)
    }

    /// Puts a watch on folder `dir` before it is read (when the scan has a watch).
    fn watch(&mut self, dir: &str) {
        if let Some(watch) = self.watch.as_deref_mut() {
            watch.add(self.cx.root, dir);
        }
    }

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
        self.watch(dir);
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
    fn collect(&mut self, rel: &str, seen: &mut NewTree) -> bool {
        let path = rel_path::under(self.cx.root, rel);
        self.watch(rel);
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
    let total =
        i128::from(secs) * 1_000_000_000 + i128::from(nanos) - RACY_MARGIN.as_nanos() as i128;
    (
        (total.div_euclid(1_000_000_000)) as i64,
        (total.rem_euclid(1_000_000_000)) as i64,
    )
}
