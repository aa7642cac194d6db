//! The record of a run's containment in result.json (`sandbox`): the mode asked, the
//! mechanism, what the start-up probe found enforced and missing, and what stays writable,
//! hidden and read-only, with the limits and what binds them.

use super::{
    ContainedBy, LimitsRecord, MemoryBy, Probe, ProcessesBy, Protection, SandboxMode,
    SandboxPolicy, SandboxStatus,
};

/// The result.json record of a run's containment.
pub fn describe(probe: &Probe, policy: &SandboxPolicy) -> SandboxStatus {
    let shown = |v: &[std::path::PathBuf]| v.iter().map(|p| p.display().to_string()).collect();
    let fs = policy.mode == SandboxMode::WorkspaceWrite;
    let hides = probe.enforced.contains(&Protection::HiddenCredentials);
    SandboxStatus {
        mode: policy.mode,
        network: policy.network,
        required: policy.require,
        mechanism: probe.mechanism,
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
        limits: (probe.mechanism == ContainedBy::Bubblewrap).then(|| limits_record(probe, policy)),
    }
}

/// The limits and what binds them: the run's cgroup, or the supervisor's resource limits;
/// for root otherwise a PID namespace's bound (the run's, or each command's own where the
/// probe found it set).
fn limits_record(probe: &Probe, policy: &SandboxPolicy) -> LimitsRecord {
    let cgroup = policy.cgroup.is_some();
    let root = rustix::process::geteuid().is_root();
    let per_command = super::pid_bound::per_command(policy)
        && probe.enforced.contains(&Protection::BoundedResources);
    let without = match (root, super::pid_bound::binds(policy) || per_command) {
        (false, _) => ProcessesBy::RlimitPerCommand,
        (true, true) => ProcessesBy::PidNamespace,
        (true, false) => ProcessesBy::None,
    };
    LimitsRecord {
        limits: policy.limits,
        memory_by: if cgroup {
            MemoryBy::Cgroup
        } else {
            MemoryBy::RlimitPerProcess
        },
        processes_by: if cgroup { ProcessesBy::Cgroup } else { without },
    }
}
