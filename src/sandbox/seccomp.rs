//! No host socket: a seccomp filter that refuses `socket(AF_UNIX, …)` (and io_uring, which
//! can make sockets without the `socket` system call) to every contained command; and no
//! setuid or setgid file left behind (see [`refused`]).
//!
//! Why a filter rather than a view without the socket folders: a Unix socket can live in any
//! folder (`/run/docker.sock`, `~/.docker/run/docker.sock`, a group-owned socket under
//! `/srv`), no list of folders covers them all, and `/run` also holds what commands need
//! (`/etc/resolv.conf` points into it on Ubuntu). Abstract sockets have no path at all and
//! belong to the network namespace, which `network: true` shares with the host. Refusing
//! to create the socket covers all of them, root-owned or group-owned, whatever the
//! network setting — the way Claude Code's sandbox-runtime does it on Linux. The cost:
//! commands cannot make Unix sockets of their own either (`socketpair`, which only joins
//! two ends the command holds, stays allowed, so pipes between programs still work).
//!
//! The filter is per thread: the run's thread inside its sandbox (see [`super::entry`]) and
//! the per-call supervisor's main thread ([`super::call`]) put it on themselves, and every
//! process they start inherits it; the supervisor's relay thread (the proxy's one socket)
//! stays outside it. A foreign architecture's system calls (32-bit `int 0x80`) kill the
//! process; x32 numbers are refused as the native ones are.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::error::SandboxError;

/// The x32 ABI's system call numbers are the native ones with this bit set.
const X32_BIT: i64 = 0x4000_0000;

/// When a system call is refused.
#[derive(Debug, Clone, Copy)]
enum When {
    Always,
    /// Its first argument is `AF_UNIX`.
    UnixFamily,
    /// Its argument at this index (a file mode) has the setuid or setgid bit.
    SetId(u8),
    /// Its first argument (`unshare`'s or `clone`'s flags) asks for a new user namespace.
    NewUser,
}

/// The system calls refused with EPERM, and when. Besides Unix sockets: the kernel's
/// keyrings (`add_key`, `request_key`, `keyctl`: a root command without a user namespace
/// shares root's user keyring with the host, reading the secrets kept there and planting
/// keys for the host's next root process); making a file
/// setuid or setgid (`chmod`, `fchmod`, `fchmodat(2)`, creating it with that mode by
/// `open`, `openat`, `creat`, `mknod(at)`; `openat2`, whose mode no filter can read, is
/// answered "not implemented" by [`UNSUPPORTED`]). Root without capabilities may still set those bits on its own files, and a
/// setuid-root shell left in the workspace would give root to whoever runs it after the
/// run (another user, a later unprivileged step).
fn refused() -> Vec<(i64, When)> {
    let mut calls = vec![
        (libc::SYS_socket, When::UnixFamily),
        (libc::SYS_io_uring_setup, When::Always),
        (libc::SYS_io_uring_enter, When::Always),
        (libc::SYS_io_uring_register, When::Always),
        (libc::SYS_add_key, When::Always),
        (libc::SYS_request_key, When::Always),
        (libc::SYS_keyctl, When::Always),
        (libc::SYS_fchmod, When::SetId(1)),
        (libc::SYS_fchmodat, When::SetId(2)),
        (libc::SYS_fchmodat2, When::SetId(2)),
        (libc::SYS_openat, When::SetId(3)),
        (libc::SYS_mknodat, When::SetId(3)),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod, When::SetId(1)),
        (libc::SYS_open, When::SetId(2)),
        (libc::SYS_creat, When::SetId(1)),
        (libc::SYS_mknod, When::SetId(1)),
    ]);
    with_x32(calls)
}

/// The calls answered ENOSYS, as a kernel without them would: `openat2`, whose mode lives
/// in a struct no filter can read. Programs that use it (glibc's callers, libpathrs, Rust's
/// cap-std) fall back to `openat` on ENOSYS, which [`refused`] reads; EPERM would break them.
const UNSUPPORTED: [i64; 1] = [libc::SYS_openat2];

/// Answered ENOSYS where memory is bounded per process (no cgroup): `memfd_create`, whose
/// file is memory no data limit counts (one command wrote 256 MiB under a 96 MiB limit, and
/// the file-size limit bounds only each file). Programs fall back to `/dev/shm`, the
/// sandbox's sized tmpfs, as they do on a kernel without it. And `clone3`, whose flags live
/// in a struct no filter can read (glibc falls back to `clone`, which [`NEW_USER`] reads).
const UNCOUNTED_MEMORY: [i64; 2] = [libc::SYS_memfd_create, libc::SYS_clone3];

/// Refused (EPERM) where memory is bounded per process: a new user namespace. An ordinary
/// user's command in one (`unshare -Urm`) mounts a tmpfs of its own, of no size, and fills
/// it: memory past `limits.memory` and `limits.tmp` that no rlimit counts (measured: 60 MB
/// under a 96 MiB limit in one file, as many files as it likes). Where a cgroup bounds
/// memory, tmpfs pages are charged to it.
const NEW_USER: [i64; 2] = [libc::SYS_unshare, libc::SYS_clone];

/// `calls` and, on x86_64, their x32 numbers.
fn with_x32(mut calls: Vec<(i64, When)>) -> Vec<(i64, When)> {
    if cfg!(target_arch = "x86_64") {
        let x32: Vec<(i64, When)> = calls.iter().map(|(n, w)| (n | X32_BIT, *w)).collect();
        calls.extend(x32);
    }
    calls
}

/// The rules (any one matching refuses the call) for `when`.
fn rules(when: When) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let arg = |index: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
    };
    Ok(match when {
        When::Always => Vec::new(),
        When::UnixFamily => vec![SeccompRule::new(vec![arg(
            0,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )?])?],
        When::SetId(index) => [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                let bit = u64::from(bit);
                SeccompRule::new(vec![arg(index, SeccompCmpOp::MaskedEq(bit), bit)?])
            })
            .collect::<Result<_, _>>()?,
        When::NewUser => {
            let bit = libc::CLONE_NEWUSER as u64;
            vec![SeccompRule::new(vec![arg(
                0,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )?])?]
        }
    })
}

/// A filter program for this machine's architecture answering `errno` to `calls`.
fn program(calls: Vec<(i64, When)>, errno: i32) -> Result<BpfProgram, SandboxError> {
    let bad = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(bad)?;
    let mut by_call: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, when) in calls {
        by_call.insert(nr, rules(when).map_err(bad)?);
    }
    let action = SeccompAction::Errno(errno.unsigned_abs());
    let filter = SeccompFilter::new(by_call, SeccompAction::Allow, action, arch).map_err(bad)?;
    BpfProgram::try_from(filter).map_err(bad)
}

/// Put the filters on the calling thread (and so on what it starts). Sets `no_new_privs`.
pub(crate) fn apply() -> Result<(), SandboxError> {
    let unsupported = UNSUPPORTED.iter().map(|nr| (*nr, When::Always)).collect();
    for program in [
        program(refused(), libc::EPERM)?,
        program(with_x32(unsupported), libc::ENOSYS)?,
    ] {
        seccompiler::apply_filter(&program).map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    }
    Ok(())
}

/// Put the filters for memory bounded per process on the calling thread (the supervisor's,
/// given `--rlimit data=…`): see [`UNCOUNTED_MEMORY`] and [`NEW_USER`].
pub(crate) fn apply_memory_bound() -> Result<(), SandboxError> {
    let uncounted = UNCOUNTED_MEMORY
        .iter()
        .map(|nr| (*nr, When::Always))
        .collect();
    let new_user = NEW_USER.iter().map(|nr| (*nr, When::NewUser)).collect();
    for program in [
        program(with_x32(uncounted), libc::ENOSYS)?,
        program(with_x32(new_user), libc::EPERM)?,
    ] {
        seccompiler::apply_filter(&program).map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_with_the_filter_makes_no_unix_socket_and_others_still_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let p = path.clone();
        let (applied, connect, pair, tcp) = std::thread::spawn(move || {
            let applied = apply();
            (
                applied,
                std::os::unix::net::UnixStream::connect(&p).map(|_| ()),
                std::os::unix::net::UnixStream::pair().is_ok(),
                std::net::TcpListener::bind("127.0.0.1:0").is_ok(),
            )
        })
        .join()
        .unwrap();
        applied.unwrap();
        let err = connect.unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        assert!(pair && tcp, "socketpair and TCP stay allowed");
        // The test's own thread never had the filter.
        std::os::unix::net::UnixStream::connect(&path).unwrap();
        drop(listener);
    }

    #[test]
    fn a_thread_with_the_filter_makes_no_setuid_or_setgid_file() {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let results = std::thread::spawn(move || {
            apply().unwrap();
            let plain = d.join("plain");
            std::fs::write(&plain, "x").unwrap();
            let mode = |m| std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(m));
            let create = |name: &str, m| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(m)
                    .open(d.join(name))
                    .map(|_| ())
            };
            [
                mode(0o755).is_ok(),
                mode(0o4755).is_err(),
                mode(0o2755).is_err(),
                create("suid", 0o4755).is_err(),
                create("ok", 0o755).is_ok(),
            ]
        })
        .join()
        .unwrap();
        assert_eq!(results, [true; 5]);
        let meta = std::fs::metadata(dir.path().join("plain")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
        assert!(!dir.path().join("suid").exists());
    }

    #[test]
    fn openat2_is_answered_not_implemented_so_programs_fall_back_to_openat() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let (openat2, openat) = std::thread::spawn(move || {
            apply().unwrap();
            use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
            let how = (OFlags::RDONLY, Mode::empty(), ResolveFlags::empty());
            let openat2 = rustix::fs::openat2(CWD, &file, how.0, how.1, how.2).err();
            (
                openat2.map(rustix::io::Errno::raw_os_error),
                std::fs::read_to_string(&file).ok(),
            )
        })
        .join()
        .unwrap();
        assert_eq!(openat2, Some(libc::ENOSYS));
        assert_eq!(openat.as_deref(), Some("x"));
    }
}
