//! Where a run's Bash commands execute, as the evaluator needs to know it: contained (the
//! whole containment profile in force, network included unless the job allows it) or not,
//! and whether a read-only run is kept read-only by the sandbox or must be kept so by the
//! policy.

use super::types::Mode;
use crate::command_safety::Context;
use crate::sandbox::{SandboxMode, SandboxStatus};

/// The evaluation context of a run in `mode` whose sandbox was established as `sandbox`
/// (`None`: not probed). Commands count as contained only when every protection of the
/// profile the job did not give up is in force: a partial fallback (no PID namespace, no
/// hidden credentials) does not make running repository code harmless.
pub fn command_context(mode: Mode, sandbox: Option<&SandboxStatus>) -> Context {
    let full = |s: &&SandboxStatus| {
        s.mode != SandboxMode::Off && s.missing.is_empty() && !s.enforced.is_empty()
    };
    let fs = sandbox.filter(full);
    let kept_read_only = fs.is_some_and(|s| s.mode == SandboxMode::ReadOnly);
    Context {
        contained: fs.is_some(),
        read_only: mode == Mode::Plan && !kept_read_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Protection;

    fn status(mode: SandboxMode, enforced: &[Protection], missing: &[Protection]) -> SandboxStatus {
        SandboxStatus {
            mode,
            network: false,
            required: false,
            mechanism: crate::events::ContainedBy::Bubblewrap,
            enforced: enforced.to_vec(),
            missing: missing.to_vec(),
            writable: Vec::new(),
            hidden: Vec::new(),
            notes: Vec::new(),
            hosts: Vec::new(),
            git: crate::sandbox::GitAccess::default(),
            read_only: Vec::new(),
            limits: None,
        }
    }

    #[test]
    fn only_a_fully_enforced_sandbox_contains() {
        use Protection::{HiddenCredentials, NoNetwork, PidNamespace, ReadOnlyOutsideWorkspace};
        let ww = SandboxMode::WorkspaceWrite;
        let all = [
            ReadOnlyOutsideWorkspace,
            HiddenCredentials,
            PidNamespace,
            NoNetwork,
        ];
        let c = |s: Option<&SandboxStatus>, mode| command_context(mode, s);
        assert!(!c(None, Mode::Headless).contained);
        assert!(c(Some(&status(ww, &all, &[])), Mode::Headless).contained);
        // A fallback that misses part of the profile does not contain.
        let partial = status(ww, &[ReadOnlyOutsideWorkspace], &[PidNamespace, NoNetwork]);
        assert!(!c(Some(&partial), Mode::Headless).contained);
        assert!(!c(Some(&status(ww, &[], &all)), Mode::Headless).contained);
        assert!(!c(Some(&status(SandboxMode::Off, &[], &[])), Mode::Headless).contained);
        // Plan mode is kept read-only by a read-only sandbox, else by the policy.
        assert!(c(None, Mode::Plan).read_only);
        assert!(c(Some(&status(ww, &all, &[])), Mode::Plan).read_only);
        let ro = status(SandboxMode::ReadOnly, &all, &[]);
        assert!(!c(Some(&ro), Mode::Plan).read_only);
        assert!(!c(None, Mode::Auto).read_only);
    }
}
