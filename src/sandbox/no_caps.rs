//! The fallback launcher (no bubblewrap) holds no capability either, as the bubblewrap
//! paths do: before it `exec`s the command it sets `no_new_privs` and empties every
//! capability set — the bounding set too, so that an `exec` as root gains none back — and
//! then reads `/proc/self/status` to report what took effect rather than assume it.

use rustix::io::Errno;
use rustix::thread::{self, CapabilitySet, CapabilitySets};

/// Empty the capability sets of this thread (and what it `exec`s) and set `no_new_privs`.
/// The bounding set can only be emptied with `CAP_SETPCAP`; without it (an ordinary user)
/// it stays, and nothing in it can be gained under `no_new_privs` by a non-root uid.
pub(crate) fn drop_all() -> Result<(), String> {
    thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    let own = thread::capabilities(None).map_err(|e| format!("reading them: {e}"))?;
    if own.effective.contains(CapabilitySet::SETPCAP) {
        for bit in 0..64 {
            match thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(
                1 << bit,
            )) {
                // Past the kernel's last capability.
                Ok(()) | Err(Errno::INVAL) => {}
                Err(e) => return Err(format!("bounding set: {e}")),
            }
        }
    }
    thread::clear_ambient_capability_set().map_err(|e| format!("ambient set: {e}"))?;
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    thread::set_capabilities(None, none).map_err(|e| format!("the other sets: {e}"))
}

/// Whether this process now holds no capability and can gain none: every set empty (the
/// bounding set too for uid 0, whose `exec` would refill the others from it) and
/// `no_new_privs` set, as `/proc/self/status` says.
pub(crate) fn verified() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| holds_none(&s))
}

fn holds_none(status: &str) -> bool {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let empty = |name: &str| field(name).is_some_and(|v| v.bytes().all(|b| b == b'0'));
    let root = field("Uid").is_some_and(|v| v.split_whitespace().nth(1) == Some("0"));
    ["CapInh", "CapPrm", "CapEff", "CapAmb"]
        .iter()
        .all(|n| empty(n))
        && (!root || empty("CapBnd"))
        && field("NoNewPrivs") == Some("1")
}

#[cfg(test)]
mod tests {
    use super::holds_none;

    const ROOT_DROPPED: &str = "Uid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";

    #[test]
    fn the_status_says_whether_nothing_is_held() {
        assert!(holds_none(ROOT_DROPPED));
        // Root with a full bounding set would get its capabilities back at exec.
        let bounding =
            ROOT_DROPPED.replace("CapBnd:\t0000000000000000", "CapBnd:\t000001ffffffffff");
        assert!(!holds_none(&bounding));
        // An ordinary user keeps the bounding set and gains nothing from it.
        let user = bounding.replace("Uid:\t0\t0\t0\t0", "Uid:\t1000\t1000\t1000\t1000");
        assert!(holds_none(&user));
        assert!(!holds_none(&ROOT_DROPPED.replace(
            "CapEff:\t0000000000000000",
            "CapEff:\t0000000000000400"
        )));
        assert!(!holds_none(
            &ROOT_DROPPED.replace("NoNewPrivs:\t1", "NoNewPrivs:\t0")
        ));
        assert!(!holds_none(""));
    }

    #[test]
    fn a_thread_that_dropped_everything_holds_nothing() {
        // On a thread of its own: capabilities are per thread, the test process keeps its own.
        let held = std::thread::spawn(|| {
            super::drop_all().unwrap();
            let own = "/proc/thread-self/status";
            std::fs::read_to_string(own).map(|s| holds_none(&s))
        })
        .join()
        .unwrap();
        assert!(held.unwrap());
    }
}
