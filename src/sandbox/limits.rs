//! Limits that bind a run's contained commands (`tools.bash.limits`): memory, process count,
//! the size of the private `/tmp` (and `/var/tmp`, `/dev/shm`) and of any one file.
//!
//! How each binds depends on what the machine lets cn-run do ([`super::cgroup`]): as root
//! where a cgroup hierarchy with the memory and pids controllers is writable (cgroup v1, or
//! v2 where the controllers are delegated to cn-run's cgroup), the run's commands share one
//! cgroup, so memory and processes are bounded for the run. Otherwise the per-call
//! supervisor sets resource limits on itself before it starts the command: `RLIMIT_DATA`
//! bounds each process's memory, and `RLIMIT_NPROC` the processes of one command in its own
//! user namespace (the kernel counts them per user namespace; an ordinary user's bubblewrap
//! makes one per command; the kernel never applies it to uid 0, so root without a cgroup
//! gets the run's PID namespace bounded instead, [`super::pid_bound`]). The temporary folders are sized tmpfs mounts, in memory, gone
//! with the sandbox. `RLIMIT_FSIZE` bounds one file everywhere (a 20 GB file ends the
//! command with `File size limit exceeded`).

use super::Limits;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

impl Default for Limits {
    /// Half the machine's memory (at least 1 GiB), 4096 processes, 2 GiB of temporary
    /// space, 16 GiB per file.
    fn default() -> Self {
        Limits {
            memory_bytes: (physical_memory() / 2).max(GIB),
            processes: 4096,
            tmp_bytes: 2 * GIB,
            file_size_bytes: 16 * GIB,
        }
    }
}

/// The machine's memory (`/proc/meminfo`), 8 GiB when it cannot be read.
fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(8 * GIB)
}

/// A size as the job writes it: bytes (`1048576`) or a number with a unit (`512MiB`, `2G`,
/// `64k`; K, M, G, T are powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 512MiB, 2GiB, 1048576)"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let factor = match unit.trim_end_matches('b').trim_end_matches('i') {
        "" => 1,
        "k" => 1 << 10,
        "m" => MIB,
        "g" => GIB,
        "t" => 1 << 40,
        _ => {
            return Err(format!(
                "`{text}`: unknown unit (use K, M, G or T, e.g. 512MiB)"
            ));
        }
    };
    n.checked_mul(factor)
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("`{text}` is not a usable size"))
}

/// The supervisor's resource-limit arguments (`--rlimit NAME=VALUE`): the file size always;
/// memory and processes when no cgroup binds them.
pub(crate) fn rlimit_args(limits: &Limits, cgroup: bool) -> Vec<std::ffi::OsString> {
    let mut pairs = vec![("fsize", limits.file_size_bytes)];
    if !cgroup {
        let (data, stack) = data_and_stack(limits.memory_bytes);
        pairs.push(("data", data));
        pairs.push(("stack", stack));
        if !rustix::process::geteuid().is_root() {
            pairs.push(("nproc", limits.processes));
        }
    }
    pairs
        .into_iter()
        .flat_map(|(k, v)| ["--rlimit".into(), format!("{k}={v}").into()])
        .collect()
}

/// The memory limit split between `RLIMIT_DATA` and the hard `RLIMIT_STACK`, so that one
/// process's data and main-thread stack together stay within it. The main thread's stack
/// is not data: with a hard stack limit of the whole memory limit, `ulimit -s unlimited`
/// plus a full heap gave a process twice the limit. An eighth goes to the stack (128 MiB
/// of a 1 GiB limit, 16 times the usual 8 MiB), never less than 1 MiB; thread stacks are
/// mappings and count as data.
pub(crate) fn data_and_stack(memory: u64) -> (u64, u64) {
    let stack = (memory / STACK_SHARE).max(MIB).min(memory / 2);
    (memory - stack, stack)
}

/// The share of the memory limit the main thread's stack may take (one in this many).
const STACK_SHARE: u64 = 8;

/// Apply `--rlimit NAME=VALUE` to this process (soft and hard: a command cannot raise it).
/// The stack keeps a smaller soft limit (glibc sizes each thread's stack by it, and that
/// counts as data).
pub(crate) fn apply_rlimit(spec: &str) -> Result<(), String> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let (name, value) = spec.split_once('=').ok_or(format!("bad --rlimit {spec}"))?;
    let value: u64 = value.parse().map_err(|_| format!("bad --rlimit {spec}"))?;
    let resource = match name {
        "fsize" => Resource::Fsize,
        "data" => Resource::Data,
        "nproc" => Resource::Nproc,
        "stack" => Resource::Stack,
        _ => return Err(format!("unknown --rlimit {name}")),
    };
    let current = match resource {
        Resource::Stack => getrlimit(resource).current.map_or(value, |c| c.min(value)),
        _ => value,
    };
    let limit = Rlimit {
        current: Some(current),
        maximum: Some(value),
    };
    setrlimit(resource, limit).map_err(|e| format!("setrlimit {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("1048576"), Ok(MIB));
        assert_eq!(parse_size("512MiB"), Ok(512 * MIB));
        assert_eq!(parse_size("2G"), Ok(2 * GIB));
        assert_eq!(parse_size("2 gb"), Ok(2 * GIB));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        for bad in ["", "MiB", "12 parsecs", "0", "-1G", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn data_and_stack_together_stay_within_the_memory_limit() {
        for memory in [2 * MIB, 16 * MIB, 96 * MIB, GIB, 64 * GIB] {
            let (data, stack) = data_and_stack(memory);
            assert_eq!(data + stack, memory, "{memory}");
            assert!(
                stack >= MIB.min(memory / 2) && data >= memory / 2,
                "{memory}"
            );
        }
        assert_eq!(data_and_stack(GIB), (GIB - 128 * MIB, 128 * MIB));
    }

    #[test]
    fn defaults_are_bounded() {
        let d = Limits::default();
        assert!(
            d.memory_bytes >= GIB && d.file_size_bytes < 20 * GIB,
            "{d:?}"
        );
    }
}
