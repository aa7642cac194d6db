//! The names that changed in the scanned folders since the last scan, as the kernel
//! reports them (inotify), so a scan need not `lstat` every file to find them.
//!
//! A scan (`scan.rs`) that reads folders puts a watch on each one it reads. From then on,
//! the next scan takes the names the kernel reported in those folders — a file written,
//! closed after writing, its mode or times changed, a name created, removed or moved — as
//! its candidates, and walks only the folders created or moved in since: a Bash call's
//! checkpoint costs what the call changed, not the 100,000 `lstat`s of a large tree (each
//! later call that may change files waits for it). The events are only trusted when they
//! can be: the kernel's queue overflowed, a watched folder was removed or moved out (its
//! watch would name the wrong path), an event came for a watch no longer known, or a
//! watch could not be added (`fs.inotify.max_user_watches`): the scan then `lstat`s every
//! file and reads every folder again, as without a watch, and the watch is put back (or,
//! when a watch could not be added, given up for the run).
//!
//! What no folder watch reports, a scan looks at by `stat` still: a file with other hard
//! links (a write through a name in a folder not watched is reported there only), and at
//! the end of a run whose checkpoints trusted the events, every file (`Scan::check_next`).

use std::collections::{BTreeSet, HashMap};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

use super::rel_path;

/// More folders than this are not watched (each watch holds kernel memory): the scan
/// stats every file instead.
const MAX_WATCHED: usize = 65_536;

/// One inotify instance and the folder each of its watches is on.
pub(crate) struct Watch {
    fd: OwnedFd,
    /// Watch descriptor → repo-relative folder (`""` for the root).
    dirs: HashMap<i32, String>,
    /// A watch could not be added: the events do not cover every folder.
    failed: bool,
}

/// What the events since the last drain name (repo-relative): files, links and folders
/// whose content, mode or name changed, and folders created or moved in.
#[derive(Default)]
pub(crate) struct Events {
    pub(crate) names: BTreeSet<String>,
    pub(crate) new_dirs: BTreeSet<String>,
}

impl Watch {
    /// A new inotify instance; `None` where the kernel gives none (the scan stats).
    pub(crate) fn new() -> Option<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Watch {
            fd,
            dirs: HashMap::new(),
            failed: false,
        })
    }

    /// Watches folder `rel` under `root` (before it is read, so no change is missed
    /// between the read and the watch). A folder already watched keeps its descriptor.
    pub(crate) fn add(&mut self, root: &Path, rel: &str) {
        if self.failed {
            return;
        }
        let mask = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        let added = inotify::add_watch(&self.fd, rel_path::under(root, rel).as_path(), mask);
        match added {
            Ok(wd) if self.dirs.len() < MAX_WATCHED => {
                self.dirs.insert(wd, rel.to_owned());
            }
            _ => self.failed = true,
        }
    }

    /// Whether a watch could not be added (the run goes on without the watch).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Takes every event queued so far; `None` when they cannot be trusted to name every
    /// change (the queue overflowed, a watched folder went or moved).
    pub(crate) fn drain(&mut self) -> Option<Events> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 16 << 10];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        let mut events = Events::default();
        let mut trusted = !self.failed;
        let mut gone = Vec::new();
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => break,
                Err(_) => {
                    trusted = false;
                    break;
                }
            };
            let flags = event.events();
            let untrusted = ReadFlags::QUEUE_OVERFLOW
                | ReadFlags::IGNORED
                | ReadFlags::UNMOUNT
                | ReadFlags::DELETE_SELF
                | ReadFlags::MOVE_SELF;
            if flags.intersects(untrusted) {
                trusted = false;
                if flags.contains(ReadFlags::IGNORED) {
                    gone.push(event.wd());
                }
                continue;
            }
            let (Some(dir), Some(name)) = (self.dirs.get(&event.wd()), event.file_name()) else {
                trusted &= self.dirs.contains_key(&event.wd());
                continue;
            };
            let name = rel_path::from_bytes(name.to_bytes());
            let rel = if dir.is_empty() {
                name.into_owned()
            } else {
                format!("{dir}/{name}")
            };
            if !flags.contains(ReadFlags::ISDIR) {
                events.names.insert(rel);
            } else if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                events.new_dirs.insert(rel);
            } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                trusted = false;
            }
        }
        for wd in gone {
            self.dirs.remove(&wd);
        }
        trusted.then_some(events)
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
