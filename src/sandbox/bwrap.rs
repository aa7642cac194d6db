//! The default mechanism: bubblewrap (`bwrap`, Debian package `bubblewrap`), the tool codex
//! and Claude Code use on Linux. Each command runs as
//! `bwrap <profile> -- bash -c COMMAND`: a read-only view of `/` with the workspace (and the
//! job's extra folders) bound writable, the run's private temporary folders over `/tmp`,
//! `/var/tmp` and `/dev/shm`, the credential locations covered, a fresh read-only `/dev`, its own PID
//! namespace with a fresh `/proc` (`--die-with-parent`: when the command's shell ends,
//! bubblewrap's init is killed and every process left in the namespace with it), a new
//! network namespace unless the job allows the network, and a new IPC namespace.
//!
//! Why bubblewrap rather than namespaces done in cn-run: the crate forbids `unsafe`, so it
//! cannot run code between `fork` and `exec`; a self-exec launcher costs a start of cn-run
//! (a large binary) per command, twice for a PID namespace with a fresh `/proc` (its init
//! must mount it). bubblewrap is small C, does the mount set-up in one process, works as
//! root and, where unprivileged user namespaces are allowed, as an ordinary user (on Ubuntu
//! 24.04 its AppArmor profile is what allows them). Measured on this machine (kernel 6.18):
//! see `benches/sandbox.rs`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{SandboxMode, SandboxPolicy};

/// Where `bwrap` is: the first executable `bwrap` on `PATH`, else `/usr/bin/bwrap`.
pub fn find(path_var: Option<&OsStr>) -> Option<PathBuf> {
    let on_path = path_var
        .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

/// The run's private temporary folders inside the sandbox: sized tmpfs mounts.
pub(crate) const TEMP_DIRS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// bubblewrap's arguments (after the program) that run `argv` in `cwd` under `policy`,
/// under the per-call supervisor.
pub(crate) fn args(policy: &SandboxPolicy, cwd: &Path, argv: &[&OsStr]) -> Vec<OsString> {
    let mut a = Args(profile(policy));
    a.one("--chdir", cwd);
    a.flags(&["--"]);
    a.0.extend(policy.supervised(&[], argv));
    a.0
}

/// The profile part of bubblewrap's arguments: namespaces and mounts, no command. The
/// command is the supervisor, PID 1 of the sandbox (`--as-pid-1`: no process in there
/// that the socket filter does not hold, or that a command could trace).
pub(crate) fn profile(policy: &SandboxPolicy) -> Vec<OsString> {
    let mut a = Args(Vec::new());
    a.flags(&["--die-with-parent", "--new-session", "--unshare-pid"]);
    if policy.pinned.is_some() {
        a.flags(&["--as-pid-1"]);
    }
    a.flags(&["--cap-drop", "ALL"]);
    if super::pid_bound::per_command(policy) {
        // For the supervisor alone, to bound its PID namespace; dropped before any command.
        a.flags(&["--cap-add", "CAP_SYS_ADMIN"]);
    }
    // With the run's shared namespaces the spawner thread is already in new network, IPC
    // and UTS namespaces (see `run_net`).
    if policy.run_net.is_none() {
        a.flags(&[
            "--unshare-ipc",
            "--unshare-uts",
            "--hostname",
            "cn-run-sandbox",
        ]);
        if !policy.network {
            a.flags(&["--unshare-net"]);
        }
    }
    a.pair("--ro-bind", Path::new("/"), Path::new("/"));
    a.one("--dev", Path::new("/dev"));
    if let Some(pinned) = &policy.pinned {
        a.0.extend(pinned.bind_args());
    }
    if let Some(relay) = &policy.relay {
        a.pair(
            "--bind",
            &relay.socket,
            Path::new(super::relay::SOCKET_INSIDE),
        );
    }
    a.one("--proc", Path::new("/proc"));
    // The kernel lets any process whose effective uid is 0 write the machine's sysctls, no
    // capability needed (`kernel.core_pattern` runs a program of the writer's choice as
    // root on the host; `kernel.pid_max` of the run's PID namespace is its process bound):
    // bubblewrap does not cover `/proc/sys` when it starts as root, so cn-run does.
    a.pair("--ro-bind", Path::new("/proc/sys"), Path::new("/proc/sys"));
    a.pair(
        "--ro-bind-try",
        Path::new("/proc/sysrq-trigger"),
        Path::new("/proc/sysrq-trigger"),
    );
    let size = policy.limits.tmp_bytes.to_string();
    for inside in TEMP_DIRS {
        a.flags(&["--size", &size]);
        a.one("--tmpfs", Path::new(inside));
    }
    views(&mut a, policy);
    // bubblewrap's `/dev` is a tmpfs of no size owned by the command's user: a file written
    // there is memory past `limits.tmp` and `limits.memory`. Read-only once every mount
    // under it is made; its own mounts (`/dev/shm`, `/dev/pts`, the device nodes) stay as
    // they are (`--remount-ro` is not recursive).
    a.one("--remount-ro", Path::new("/dev"));
    a.0
}

/// The workspace (and the job's folders) writable over the read-only root and the private
/// `/tmp` (so a workspace in `/tmp` is still there), or read-only under `read-only`; then
/// what stays read-only inside them: the run's folders (with a workspace copy inside one
/// writable again), the git folders, the supervisor's file; then the hidden credentials.
fn views(a: &mut Args, policy: &SandboxPolicy) {
    let bind = match policy.mode {
        SandboxMode::WorkspaceWrite => "--bind",
        _ => "--ro-bind",
    };
    let writable: Vec<&PathBuf> = policy.writable.iter().filter(|d| d.exists()).collect();
    for dir in &writable {
        a.pair(bind, dir, dir);
    }
    let records: Vec<&PathBuf> = policy.records.iter().filter(|r| r.exists()).collect();
    for r in &records {
        a.pair("--ro-bind", r, r);
    }
    for dir in writable
        .iter()
        .filter(|d| records.iter().any(|r| d.starts_with(r)))
    {
        a.pair(bind, dir, dir);
    }
    for anchor in policy.git_anchors.iter().filter(|g| g.exists()) {
        a.pair("--bind", anchor, anchor);
    }
    let supervisor = policy.pinned.as_ref().map(|p| &p.host_path);
    let inside_writable = |p: &&PathBuf| writable.iter().any(|w| p.starts_with(w));
    for path in (policy.git_read_only.iter().chain(supervisor)).filter(inside_writable) {
        if path.exists() {
            a.pair("--ro-bind", path, path);
        }
    }
    // After the writable binds, so an extra writable folder (`~/.config`) cannot show them.
    for hidden in &policy.hidden {
        if hidden.is_dir() {
            a.one("--tmpfs", hidden);
            a.one("--remount-ro", hidden);
        } else {
            a.pair("--ro-bind", Path::new("/dev/null"), hidden);
        }
    }
}

struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }
    fn one(&mut self, flag: &str, path: &Path) {
        self.0.push(flag.into());
        self.0.push(path.into());
    }
    fn pair(&mut self, flag: &str, from: &Path, to: &Path) {
        self.one(flag, from);
        self.0.push(to.into());
    }
}
