//! The record of a run's containment in result.json (`sandbox`): the mode asked, the
//! mechanism, what the start-up probe found enforced and missing, and what stays writable,
//! hidden and read-only, with the limits and what binds them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{GitAccess, LimitsRecord, Probe, Protection, SandboxMode, SandboxPolicy};

/// The containment of a run, for result.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxStatus {
    /// `off`, `workspace-write` or `read-only`, as the job asked.
    pub mode: SandboxMode,
    /// Whether commands could use the network, as the job asked.
    pub network: bool,
    /// Whether the run required the whole profile (`require_sandbox`).
    pub required: bool,
    /// `bubblewrap`, `landlock` (the fallback launcher) or `none`; `pending` while it is
    /// being set up (`run.started`), `not-needed` when the run ended before any command
    /// needed it (so it was never set up).
    pub mechanism: String,
    /// The protections in force.
    pub enforced: Vec<Protection>,
    /// The protections of the default profile not in force.
    pub missing: Vec<Protection>,
    /// Where commands could write (besides the private temporary folders).
    pub writable: Vec<String>,
    /// The credential locations hidden from commands.
    pub hidden: Vec<String>,
    /// Why something was not fully enforced.
    pub notes: Vec<String>,
    /// With `network: [hosts]`: the hosts commands may reach through cn-run's proxy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// What commands may do to the git folders (`tools.bash.git`); absent: read-only.
    #[serde(default, skip_serializing_if = "GitAccess::is_read_only")]
    pub git: GitAccess,
    /// Paths under the writable folders that commands could not change: git folders and
    /// the run's own records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    /// The limits on the run's commands and how each binds (absent when off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsRecord>,
}

/// The result.json record of a run's containment.
pub fn describe(probe: &Probe, policy: &SandboxPolicy) -> SandboxStatus {
    let shown = |v: &[std::path::PathBuf]| v.iter().map(|p| p.display().to_string()).collect();
    let fs = policy.mode == SandboxMode::WorkspaceWrite;
    let hides = probe.enforced.contains(&Protection::HiddenCredentials);
    SandboxStatus {
        mode: policy.mode,
        network: policy.network,
        required: policy.require,
        mechanism: probe.mechanism.clone(),
        enforced: probe.enforced.clone(),
        missing: probe.missing.clone(),
        writable: if fs {
            shown(&policy.writable)
        } else {
            Vec::new()
        },
        hidden: if hides {
            shown(&policy.hidden)
        } else {
            Vec::new()
        },
        notes: probe.notes.clone(),
        hosts: policy.hosts.iter().map(ToString::to_string).collect(),
        git: policy.git,
        read_only: if fs {
            shown(&[policy.git_read_only.clone(), policy.records.clone()].concat())
        } else {
            Vec::new()
        },
        limits: (probe.mechanism == "bubblewrap").then(|| limits_record(policy)),
    }
}

/// The limits and what binds them: the run's cgroup, or the supervisor's resource limits.
fn limits_record(policy: &SandboxPolicy) -> LimitsRecord {
    let cgroup = policy.cgroup.is_some();
    let by = |yes: &str, no: &str| if cgroup { yes } else { no }.to_owned();
    let root = rustix::process::geteuid().is_root();
    let without = match (root, super::pid_bound::binds(policy)) {
        (false, _) => "rlimit-per-command",
        (true, true) => "pid-namespace",
        (true, false) => "none",
    };
    LimitsRecord {
        limits: policy.limits,
        memory_by: by("cgroup", "rlimit-per-process"),
        processes_by: by("cgroup", without),
    }
}
