//! No host socket: a seccomp filter that refuses `socket(AF_UNIX, …)` (and io_uring, which
//! can make sockets without the `socket` system call) to every contained command.
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

/// The system calls refused with EPERM: (number, only when the first argument is AF_UNIX).
fn refused() -> Vec<(i64, bool)> {
    let mut calls = vec![
        (libc::SYS_socket, true),
        (libc::SYS_io_uring_setup, false),
        (libc::SYS_io_uring_enter, false),
        (libc::SYS_io_uring_register, false),
    ];
    if cfg!(target_arch = "x86_64") {
        let x32: Vec<(i64, bool)> = calls.iter().map(|(n, a)| (n | X32_BIT, *a)).collect();
        calls.extend(x32);
    }
    calls
}

/// The filter program for this machine's architecture.
pub(crate) fn program() -> Result<BpfProgram, SandboxError> {
    let bad = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(bad)?;
    let unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_UNIX as u64,
    )
    .map_err(bad)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, only_unix) in refused() {
        let rule = if only_unix {
            vec![SeccompRule::new(vec![unix.clone()]).map_err(bad)?]
        } else {
            Vec::new()
        };
        rules.insert(nr, rule);
    }
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch).map_err(bad)?;
    BpfProgram::try_from(filter).map_err(bad)
}

/// Put the filter on the calling thread (and so on what it starts). Sets `no_new_privs`.
pub(crate) fn apply() -> Result<(), SandboxError> {
    let program = program()?;
    seccompiler::apply_filter(&program).map_err(|e| SandboxError::Seccomp(e.to_string()))
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
}
