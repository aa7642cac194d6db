//! A process bound for root where no cgroup can be made: the run's PID namespace may hold
//! no more than `processes` processes and threads at once.
//!
//! The kernel never applies `RLIMIT_NPROC` to the root user (it exempts the real uid 0's
//! user_struct whatever the capabilities), and a command cannot run with another real uid
//! and still write as root: with `no_new_privs` every `exec` sets the effective uid back to
//! the real one (measured: `setresuid(N, 0, 0)`, empty capabilities and `no_new_privs`,
//! then `bash` runs as uid N and can no longer write the root-owned workspace). Since Linux
//! 6.14, `kernel.pid_max` belongs to each PID namespace and every level's allocation obeys
//! its own: so cn-run sets the run's namespace's `pid_max` to `processes + 300` and its
//! `ns_last_pid` to 300 (past the kernel's `RESERVED_PIDS`, so new numbers come only from
//! 300 to `pid_max - 1`: exactly `processes` of them; the holder keeps PID 1). A fork
//! beyond that fails with `EAGAIN` as under a cgroup's `pids.max`. The values are written
//! by a process cn-run starts in the run's PID namespace while still in the host's mount
//! namespace (the sandbox's own `/proc/sys` is read-only, so no command can raise them).
//!
//! With a bubblewrap per command (the run's one sandbox could not be entered) each command
//! has a PID namespace of its own, made by bubblewrap, whose PID 1 is the per-call
//! supervisor (`--as-pid-1`): it bounds that namespace itself (`--own-pid-max`) before it
//! starts anything. bubblewrap gives it `CAP_SYS_ADMIN` for that alone (`--cap-add`); it
//! takes away the read-only `/proc/sys` over the namespace's own, writes the two values,
//! binds `/proc/sys` read-only again and checks it is, then drops every capability as
//! always. On a kernel before 6.14 (one `pid_max` for the machine) nothing of this is done
//! and the record says processes are bound by nothing.

use std::path::Path;

/// Linux's `RESERVED_PIDS`: after the first wrap, PIDs below it are never handed out again.
const RESERVED: u64 = 300;
const PID_MAX: &str = "/proc/sys/kernel/pid_max";
const LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";

/// The `pid_max` that leaves room for exactly `processes` (the kernel's minimum is 301).
pub(crate) fn pid_max_for(processes: u64) -> u64 {
    processes.max(1) + RESERVED
}

/// Whether this kernel keeps `pid_max` per PID namespace (6.14 or later): on an older one a
/// write would change the whole machine's.
pub(crate) fn namespaced() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (6, 14)
}

/// The host command line that bounds the run's PID namespace: root where no cgroup binds
/// the processes (`None` otherwise: the cgroup or `RLIMIT_NPROC` does).
pub(crate) fn writer(policy: &super::SandboxPolicy) -> Option<Vec<std::ffi::OsString>> {
    if policy.cgroup.is_some() || !rustix::process::geteuid().is_root() {
        return None;
    }
    let mut argv = policy.pinned.as_ref()?.host_command()?;
    argv.extend([
        "--pid-max".into(),
        policy.limits.processes.to_string().into(),
        "--ipc-max".into(),
        policy.limits.memory_bytes.to_string().into(),
    ]);
    Some(argv)
}

/// Whether each command's own bubblewrap is bounded by its supervisor (root, no cgroup, no
/// run's sandbox to enter, a kernel with `pid_max` per namespace).
pub(crate) fn per_command(policy: &super::SandboxPolicy) -> bool {
    policy.cgroup.is_none()
        && policy.run_box.is_none()
        && policy.pinned.is_some()
        && rustix::process::geteuid().is_root()
        && namespaced()
}

/// In the supervisor (`--own-pid-max PROCESSES`), PID 1 of a command's own bubblewrap,
/// with `CAP_SYS_ADMIN`: bound this PID namespace and leave `/proc/sys` read-only again.
pub(crate) fn bound_own_namespace(processes: &str, ipc: Option<&str>) -> Result<(), String> {
    use rustix::mount::{MountFlags, UnmountFlags};
    if rustix::process::getpid().as_raw_nonzero().get() != 1 {
        return Err("--own-pid-max outside a PID namespace of its own".to_owned());
    }
    let sys = "/proc/sys";
    let fail = |what: &'static str| move |e: rustix::io::Errno| format!("{what} {sys}: {e}");
    rustix::mount::unmount(sys, UnmountFlags::DETACH).map_err(fail("cannot uncover"))?;
    let bounded = apply_here(processes).and_then(|()| ipc.map_or(Ok(()), bound_ipc));
    rustix::mount::mount_bind(sys, sys).map_err(fail("cannot bind"))?;
    let ro = MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV;
    rustix::mount::mount_remount(sys, ro | MountFlags::NOEXEC, "")
        .map_err(fail("cannot make read-only"))?;
    if rustix::fs::access(PID_MAX, rustix::fs::Access::WRITE_OK).is_ok() {
        return Err(format!("{PID_MAX} is still writable"));
    }
    bounded
}

/// Whether the run's sandbox bounds its processes through its PID namespace.
pub(crate) fn binds(policy: &super::SandboxPolicy) -> bool {
    policy
        .run_box
        .as_ref()
        .is_some_and(|b| matches!(b.pid_bound(), Some(Ok(()))))
}

/// Why the run's PID namespace could not bound its processes, for the run's notes.
pub(crate) fn note(run_box: &super::RunBox) -> Option<String> {
    match run_box.pid_bound()? {
        Ok(()) => None,
        Err(why) => Some(format!(
            "processes are not bounded (root without a cgroup, and the run's PID namespace \
             could not bound them: {why})"
        )),
    }
}

/// In the supervisor (`--pid-max PROCESSES`), started by cn-run in the run's PID namespace:
/// set that namespace's bound and read it back.
pub(crate) fn apply_here(processes: &str) -> Result<(), String> {
    let processes: u64 = processes
        .parse()
        .map_err(|_| format!("bad --pid-max {processes}"))?;
    let max = pid_max_for(processes);
    write(PID_MAX, max)?;
    write(LAST_PID, RESERVED)?;
    match read(Path::new(PID_MAX)) {
        Some(seen) if seen == max => Ok(()),
        seen => Err(format!("pid_max reads {seen:?} after writing {max}")),
    }
}

/// SysV shared memory and message queues are memory no per-process limit counts (a
/// segment detached and kept outlives every mapping; 256 MiB under a 96 MiB data limit,
/// measured). Their limits belong to the IPC namespace, whose root may write them: with
/// `bytes` the run's memory limit, every segment together (`shmall`, in pages) and each
/// (`shmmax`) stay within it, and so do the message queues (`msgmni` queues of at most
/// `msgmnb` bytes each). Written from the same process as `pid_max` (root, the run's or the
/// command's IPC namespace); read back.
pub(crate) fn bound_ipc(bytes: &str) -> Result<(), String> {
    let bytes: u64 = bytes
        .parse()
        .map_err(|_| format!("bad --ipc-max {bytes}"))?;
    let page = rustix::param::page_size() as u64;
    let per_queue = read(Path::new("/proc/sys/kernel/msgmnb"))
        .unwrap_or(16384)
        .max(1);
    let values = [
        ("/proc/sys/kernel/shmmax", bytes),
        ("/proc/sys/kernel/shmall", (bytes / page).max(1)),
        (
            "/proc/sys/kernel/msgmni",
            (bytes / per_queue).clamp(1, 32000),
        ),
    ];
    for (path, value) in values {
        write(path, value)?;
        if read(Path::new(path)) != Some(value) {
            return Err(format!("{path} does not read {value} back"));
        }
    }
    Ok(())
}

fn write(path: &str, value: u64) -> Result<(), String> {
    std::fs::write(path, value.to_string()).map_err(|e| format!("cannot write {path}: {e}"))
}

/// The host's `pid_max` (cn-run checks it did not change: it must never).
pub(crate) fn host_pid_max() -> Option<u64> {
    read(Path::new(PID_MAX))
}

fn read(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The `pid_max` a command sees (the probe's reading, inside).
pub(crate) fn seen_inside() -> Option<u64> {
    read(Path::new(PID_MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_leaves_room_for_exactly_the_processes_asked() {
        assert_eq!(pid_max_for(48), 348);
        assert_eq!(pid_max_for(0), 301);
        assert_eq!(pid_max_for(4096) - RESERVED, 4096);
    }
}
