//! The Landlock rulesets the launcher puts on itself before it `exec`s the command: one that
//! allows writes only beneath the writable folders (reading and executing stay allowed
//! everywhere), and — only when no network namespace could be made — one that blocks TCP.
//!
//! Rulesets are built best-effort: an older kernel enforces what it can, and the status the
//! kernel gives back says how much that was, which the launcher reports honestly (full,
//! partial, none) rather than assuming.

use std::path::PathBuf;

use ::landlock::{
    ABI, Access, AccessFs, AccessNet, LandlockStatus, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

use super::{Enforcement, SandboxError};

/// The ABI whose write rights are asked for: v3 (Linux 6.2) adds `truncate`. Later rights
/// (ioctl on devices, v5) are not writes and stay allowed, so terminals keep working.
const WRITE_ABI: ABI = ABI::V3;
/// The ABI that can restrict TCP bind and connect (Linux 6.7).
const NET_ABI: ABI = ABI::V4;

/// What one ruleset achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    pub enforcement: Enforcement,
    /// The Landlock ABI in use, when Landlock is available.
    pub abi: Option<u8>,
    /// Why it is not fully enforced.
    pub note: Option<String>,
}

/// Restrict the calling thread (and what it `exec`s) to writing beneath `writable` only.
/// Paths that do not exist are skipped.
pub(crate) fn restrict_writes(writable: &[PathBuf]) -> Result<Applied, SandboxError> {
    let access = AccessFs::from_write(WRITE_ABI);
    let status = Ruleset::default()
        .handle_access(access)
        .and_then(Ruleset::create)
        .and_then(|r| r.add_rules(path_beneath_rules(writable, access)))
        .and_then(|r| r.restrict_self())
        .map_err(|source| SandboxError::Landlock {
            what: "filesystem",
            source,
        })?;
    let abi = abi_of(&status.landlock);
    let note = match status.ruleset {
        RulesetStatus::FullyEnforced => None,
        RulesetStatus::PartiallyEnforced => Some(partial_write_note(abi)),
        RulesetStatus::NotEnforced => Some(unavailable_note(&status, "restrict writes")),
    };
    Ok(Applied {
        enforcement: enforcement(&status),
        abi,
        note,
    })
}

/// Block every TCP `bind` and `connect` of the calling thread (and what it `exec`s).
pub(crate) fn deny_tcp() -> Result<Applied, SandboxError> {
    let status = Ruleset::default()
        .handle_access(AccessNet::from_all(NET_ABI))
        .and_then(Ruleset::create)
        .and_then(|r| r.restrict_self())
        .map_err(|source| SandboxError::Landlock {
            what: "network",
            source,
        })?;
    let note = (status.ruleset != RulesetStatus::FullyEnforced)
        .then(|| unavailable_note(&status, "block TCP (needs ABI 4, Linux 6.7)"));
    Ok(Applied {
        enforcement: enforcement(&status),
        abi: abi_of(&status.landlock),
        note,
    })
}

fn enforcement(status: &RestrictionStatus) -> Enforcement {
    match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        RulesetStatus::NotEnforced => Enforcement::None,
    }
}

/// The ABI number, when Landlock is available.
fn abi_of(status: &LandlockStatus) -> Option<u8> {
    match status {
        LandlockStatus::Available { effective_abi, .. } => effective_abi.to_string().parse().ok(),
        _ => None,
    }
}

fn partial_write_note(abi: Option<u8>) -> String {
    let abi = abi.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!(
        "Landlock ABI {abi} (Linux older than 6.2) cannot stop truncate(2) of files outside \
         the writable folders; opening them for writing is still refused"
    )
}

fn unavailable_note(status: &RestrictionStatus, what: &str) -> String {
    match status.landlock {
        LandlockStatus::NotEnabled => format!(
            "cannot {what}: Landlock is built into this kernel but not enabled \
             (add `landlock` to the `lsm=` boot parameter)"
        ),
        LandlockStatus::NotImplemented => format!(
            "cannot {what}: this kernel has no Landlock (needs Linux 5.13 or later built with \
             CONFIG_SECURITY_LANDLOCK, and a container runtime that allows its system calls)"
        ),
        LandlockStatus::Available { effective_abi, .. } => {
            format!("cannot {what}: the kernel's Landlock ABI {effective_abi} is too old")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `f` on a thread of its own: Landlock restricts only the calling thread, so the
    /// test process is not affected once that thread ends.
    fn on_own_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(f).join().unwrap()
    }

    #[test]
    fn writes_are_refused_outside_the_writable_folders_where_landlock_exists() {
        // Only `inside` is writable here (this test does not use the policy's /tmp rule).
        let base = tempfile::tempdir().unwrap();
        let inside = base.path().join("inside");
        let outside = base.path().join("outside");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let (ins, out) = (inside, outside.clone());
        let (applied, wrote_in, wrote_out, read_out) = on_own_thread(move || {
            std::fs::write(out.join("before"), "x").unwrap();
            let applied = restrict_writes(std::slice::from_ref(&ins)).unwrap();
            (
                applied,
                std::fs::write(ins.join("a"), "a").is_ok(),
                std::fs::write(out.join("b"), "b").is_ok(),
                std::fs::read_to_string(out.join("before")).is_ok(),
            )
        });
        assert!(wrote_in && read_out, "{applied:?}");
        match applied.enforcement {
            Enforcement::None => eprintln!("skipped: {}", applied.note.unwrap_or_default()),
            _ => assert!(!wrote_out, "{applied:?}"),
        }
        // The test thread itself was never restricted.
        std::fs::write(outside.join("c"), "c").unwrap();
    }

    #[test]
    fn tcp_is_refused_after_deny_tcp_where_the_kernel_can() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (applied, connected) = on_own_thread(move || {
            let applied = deny_tcp().unwrap();
            (applied, std::net::TcpStream::connect(addr).is_ok())
        });
        match applied.enforcement {
            Enforcement::Full => assert!(!connected, "{applied:?}"),
            _ => eprintln!("skipped: {}", applied.note.unwrap_or_default()),
        }
        // The test thread itself was never restricted.
        assert!(std::net::TcpStream::connect(addr).is_ok());
    }

    #[test]
    fn partial_note_names_the_missing_right() {
        assert!(partial_write_note(Some(2)).contains("truncate"));
    }
}
