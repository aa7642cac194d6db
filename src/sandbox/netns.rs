//! Cut the launcher (and what it `exec`s) off the network: move it into a new, empty network
//! namespace. It has only a loopback device, and that one is down, so no connection of any
//! protocol reaches the host or the internet (nor a server on the host's 127.0.0.1).
//!
//! Root (or `CAP_SYS_ADMIN`) can do that directly. An unprivileged process first needs a
//! user namespace of its own; its uid and gid are then mapped to themselves so files keep
//! their owners and tools such as git see no change. Must be called while the process has
//! a single thread (a user namespace cannot be entered otherwise) — the launcher has.

use nix::sched::{CloneFlags, unshare};

/// How the network was cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Isolated {
    /// `netns` or `user+netns`.
    pub method: &'static str,
    /// Something worth knowing (a uid map that could not be written).
    pub note: Option<String>,
}

/// Enter a new network namespace, with a new user namespace when privileges require it.
pub(crate) fn isolate() -> Result<Isolated, super::SandboxError> {
    let direct = match unshare(CloneFlags::CLONE_NEWNET) {
        Ok(()) => {
            return Ok(Isolated {
                method: "netns",
                note: None,
            });
        }
        Err(e) => e,
    };
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET).map_err(|e| {
        super::SandboxError::NoNetworkNamespace {
            direct: direct.into(),
            user: e.into(),
        }
    })?;
    Ok(Isolated {
        method: "user+netns",
        note: map_ids(uid, gid).err().map(|e| e.to_string()),
    })
}

/// Map `uid` and `gid` to themselves in the new user namespace.
fn map_ids(uid: u32, gid: u32) -> Result<(), super::SandboxError> {
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text).map_err(super::error::os(format!(
            "the user namespace has no {file}; ids show as nobody"
        )))
    };
    // Required before an unprivileged process may write gid_map; absent on old kernels.
    let _ = std::fs::write("/proc/self/setgroups", "deny");
    write("uid_map", format!("{uid} {uid} 1\n"))?;
    write("gid_map", format!("{gid} {gid} 1\n"))
}
