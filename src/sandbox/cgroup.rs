//! The run's cgroup (root, where a hierarchy is writable): one child of cn-run's own cgroup
//! per controller (`memory`, `pids`), with the run's limits, that every per-call supervisor
//! joins before it starts its command (through a `cgroup.procs` descriptor opened here and
//! inherited; the supervisor has no capability and sees no writable `/sys/fs/cgroup`).
//! A child of cn-run's own cgroup stays within whatever bounds cn-run itself.
//!
//! cgroup v1 (each controller its own hierarchy) or v2 where cn-run's cgroup already hands
//! the controller to its children (`cgroup.subtree_control`); anything else, and an ordinary
//! user, gets none and the supervisor's resource limits instead ([`super::limits`]). The
//! folders are removed when the run ends, once the processes in them are gone.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use super::Limits;
use super::error::{SandboxError, os};

/// The run's cgroup folders and the descriptors that join them.
#[derive(Debug)]
pub struct RunCgroup {
    dirs: Vec<PathBuf>,
    procs: Vec<File>,
    /// The run's namespace thread (and the one inside its sandbox) are in the cgroup
    /// (cgroup v1 moves single threads), so everything started from them starts inside: the
    /// supervisors need not join (moving a process between cgroups waits for an RCU grace
    /// period: milliseconds per command).
    inherited: std::sync::atomic::AtomicBool,
}

impl RunCgroup {
    /// Make the run's cgroups with `limits`; fails unless memory and processes both bind.
    pub(crate) fn create(limits: &Limits) -> Result<RunCgroup, SandboxError> {
        let name = format!("cn-run-{}-{}", std::process::id(), fastrand::u64(..));
        let mut made = RunCgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
            inherited: std::sync::atomic::AtomicBool::new(false),
        };
        let (memory, pids) = (
            limits.memory_bytes.to_string(),
            limits.processes.to_string(),
        );
        for (controller, files, value) in [
            (
                "memory",
                &["memory.limit_in_bytes", "memory.max"][..],
                &memory,
            ),
            ("pids", &["pids.max"][..], &pids),
        ] {
            let parent = controller_dir(controller)
                .ok_or_else(|| SandboxError::Cgroup(format!("no writable {controller} cgroup")))?;
            sweep(&parent);
            let dir = parent.join(&name);
            if !made.dirs.contains(&dir) {
                std::fs::create_dir(&dir).map_err(os(format!("mkdir {}", dir.display())))?;
                made.dirs.push(dir.clone());
            }
            let wrote = files
                .iter()
                .any(|f| std::fs::write(dir.join(f), value).is_ok());
            if !wrote {
                return Err(SandboxError::Cgroup(format!(
                    "cannot set the {controller} limit in {}",
                    dir.display()
                )));
            }
            // Swap counts too where the kernel accounts it.
            let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), value);
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .map_err(os("cannot open cgroup.procs"))?;
            made.procs.push(procs);
        }
        for f in &made.procs {
            super::pin::inheritable(f.as_fd())?;
        }
        Ok(made)
    }

    /// The cgroup folders' names (as `/proc/self/cgroup` shows them).
    pub(crate) fn names(&self) -> Vec<String> {
        self.dirs
            .iter()
            .filter_map(|d| Some(d.file_name()?.to_string_lossy().into_owned()))
            .collect()
    }

    /// The cgroup folders (the holder's guard removes them should cn-run end first:
    /// [`super::guard`]).
    pub(crate) fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Whether the threads `tids` of cn-run (the run's namespace thread and the one inside
    /// its sandbox) are in the cgroup, moved there by the holder's guard
    /// ([`move_threads`]) where the hierarchy lets single threads move (v1 `tasks`):
    /// what they start then starts inside, and the supervisors need not join.
    pub(crate) fn joined(&self, tids: &[i32]) -> bool {
        let names = self.names();
        let all = tids.iter().all(|tid| {
            let Ok(mine) = std::fs::read_to_string(format!("/proc/self/task/{tid}/cgroup")) else {
                return false;
            };
            let inside = |name: &String| mine.lines().any(|l| l.ends_with(&format!("/{name}")));
            names.iter().all(inside)
        });
        self.inherited
            .store(all, std::sync::atomic::Ordering::SeqCst);
        all
    }

    /// The supervisor's arguments that make it join (`--cgroup-fd N` per controller), unless
    /// it starts inside already (`from_run_thread`: started from the run's namespace thread
    /// or the thread it made, which joined).
    pub(crate) fn args(&self, from_run_thread: bool) -> Vec<std::ffi::OsString> {
        if from_run_thread && self.inherited.load(std::sync::atomic::Ordering::SeqCst) {
            return Vec::new();
        }
        self.procs
            .iter()
            .flat_map(|f| ["--cgroup-fd".into(), f.as_raw_fd().to_string().into()])
            .collect()
    }
}

impl Drop for RunCgroup {
    /// Remove the folders once their processes are gone (they die with the run's sandbox;
    /// give them a moment, up to a second: the last one usually goes within a millisecond
    /// of the holder, so the wait is polled finely rather than in 10 ms steps).
    fn drop(&mut self) {
        self.procs.clear();
        for dir in self.dirs.iter().rev() {
            remove_when_empty(dir, 1000);
        }
    }
}

/// Remove the cgroup folder `dir` once its processes are gone, trying every millisecond up
/// to `tries` times (while it is busy).
pub(crate) fn remove_when_empty(dir: &Path, tries: u32) {
    for _ in 0..tries {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            _ => break,
        }
    }
}

/// Move cn-run's threads `tids` into the run's cgroup folders `dirs` (cgroup v1 `tasks`;
/// elsewhere they stay, and each supervisor joins instead). The holder's guard does it
/// ([`super::guard`]) while bubblewrap starts, so the grace period the first move waits for
/// overlaps that start, and in a process of its own: cn-run's exit would wait for a thread
/// of its own in that wait.
pub(crate) fn move_threads(dirs: &[PathBuf], tids: &[i32]) {
    for dir in dirs {
        for tid in tids {
            let _ = std::fs::write(dir.join("tasks"), tid.to_string());
        }
    }
}

/// Remove the empty cgroups of runs whose cn-run is gone (killed with SIGKILL, its `Drop`
/// never ran): `cn-run-PID-…` with no process PID. One still in use is not empty and stays.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("cn-run-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The folder of cn-run's own cgroup for `controller`, where cn-run may make children that
/// use it.
fn controller_dir(controller: &str) -> Option<PathBuf> {
    let mine = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in mine.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
        let v1 = list.split(',').any(|c| c == controller);
        if !v1 && !list.is_empty() {
            continue;
        }
        let Some(dir) = mount_of(&mounts, if v1 { Some(controller) } else { None })
            .map(|(root, point)| beneath(&point, &root, path))
        else {
            continue;
        };
        let delegated = v1
            || std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|s| s.split_whitespace().any(|c| c == controller));
        if delegated && dir.is_dir() {
            return Some(dir);
        }
    }
    None
}

/// (root, mount point) of the cgroup v1 hierarchy with `controller`, or of cgroup v2.
fn mount_of(mountinfo: &str, controller: Option<&str>) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let hit = match (controller, r.first()) {
            (Some(c), Some(&"cgroup")) => r.get(2)?.split(',').any(|o| o == c),
            (None, Some(&"cgroup2")) => true,
            _ => false,
        };
        if !hit {
            return None;
        }
        Some((f.get(3)?.to_string(), PathBuf::from(f.get(4)?)))
    })
}

/// `path` (as /proc/self/cgroup says it) under the mount `point` whose root is `root`.
fn beneath(point: &Path, root: &str, path: &str) -> PathBuf {
    let rel = path.strip_prefix(root).unwrap_or(path);
    point.join(rel.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hierarchies_are_found_in_mountinfo() {
        let info = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n\
                    31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mount_of(info, Some("memory")),
            Some(("/".to_owned(), PathBuf::from("/sys/fs/cgroup/memory")))
        );
        assert_eq!(mount_of(info, Some("pids")), None);
        assert_eq!(
            mount_of(info, None).map(|m| m.1),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            beneath(Path::new("/sys/fs/cgroup/memory"), "/", "/a/b"),
            PathBuf::from("/sys/fs/cgroup/memory/a/b")
        );
    }
}
