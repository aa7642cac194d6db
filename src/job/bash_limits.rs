//! `tools.bash.limits` and `tools.bash.git` as the job writes them, and their resolution:
//! the limits on the run's contained commands (sizes as `512MiB`, `2G` or bytes) and what
//! commands may do to the git folders.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sandbox::Limits;

/// `tools.bash.limits`: bounds on the run's contained commands. Each has a default.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashLimits {
    /// Memory of the run's commands together (cgroup, as root where one is writable), else
    /// of each process (default: half the machine's memory).
    pub memory: Option<Size>,
    /// Processes and threads at once (default 4096): for the run (cgroup), else per command
    /// (an ordinary user; root without a cgroup has no process bound).
    pub processes: Option<u64>,
    /// Size of each private temporary folder: `/tmp`, `/var/tmp`, `/dev/shm` (default 2GiB).
    pub tmp: Option<Size>,
    /// Largest file a command may write (default 16GiB).
    pub file_size: Option<Size>,
}

/// A size: bytes, or a number with a unit (`512MiB`, `2G`; powers of 1024).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Size {
    Bytes(u64),
    Text(String),
}

/// The limits the job sets over the defaults; problems go to `cx`.
pub(super) fn resolve(cx: &mut super::resolve::Ctx<'_>, raw: Option<&BashLimits>) -> Limits {
    let mut limits = Limits::default();
    let Some(raw) = raw else {
        return limits;
    };
    let mut size = |field: &str, value: Option<&Size>, into: &mut u64| match value {
        None => {}
        Some(Size::Bytes(0)) => cx.push(field, "must be more than 0".to_owned()),
        Some(Size::Bytes(n)) => *into = *n,
        Some(Size::Text(t)) => match crate::sandbox::limits::parse_size(t) {
            Ok(n) => *into = n,
            Err(why) => cx.push(field, why),
        },
    };
    size(
        "tools.bash.limits.memory",
        raw.memory.as_ref(),
        &mut limits.memory_bytes,
    );
    size(
        "tools.bash.limits.tmp",
        raw.tmp.as_ref(),
        &mut limits.tmp_bytes,
    );
    size(
        "tools.bash.limits.file_size",
        raw.file_size.as_ref(),
        &mut limits.file_size_bytes,
    );
    match raw.processes {
        Some(0) => cx.push(
            "tools.bash.limits.processes",
            "must be more than 0".to_owned(),
        ),
        Some(n) => limits.processes = n,
        None => {}
    }
    limits
}
