//! Where a run's Bash commands execute, as the evaluator needs to know it: contained (an
//! enforced filesystem sandbox, and no network unless the job allows it) or not, and whether
//! a read-only run is kept read-only by the sandbox or must be kept so by the policy.

use super::types::Mode;
use crate::command_safety::Context;
use crate::sandbox::{Enforcement, SandboxMode, SandboxStatus};

/// The evaluation context of a run in `mode` whose sandbox probed as `sandbox` (`None`: off).
pub fn command_context(mode: Mode, sandbox: Option<&SandboxStatus>) -> Context {
    let enforced = |s: &&SandboxStatus| {
        s.mode != SandboxMode::Off && s.filesystem_enforcement == Enforcement::Full
    };
    let fs = sandbox.filter(enforced);
    let contained = fs.is_some_and(|s| s.network || s.network_enforcement == Enforcement::Full);
    let kept_read_only = fs.is_some_and(|s| s.mode == SandboxMode::ReadOnly);
    Context {
        contained,
        read_only: mode == Mode::Plan && !kept_read_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(
        mode: SandboxMode,
        fs: Enforcement,
        network: bool,
        net: Enforcement,
    ) -> SandboxStatus {
        SandboxStatus {
            mode,
            network,
            required: false,
            filesystem_enforcement: fs,
            network_enforcement: net,
            landlock_abi: None,
            network_method: None,
            writable: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn only_an_enforced_sandbox_contains() {
        use Enforcement::{Full, Off};
        let ww = SandboxMode::WorkspaceWrite;
        let c = |s: Option<&SandboxStatus>, mode| command_context(mode, s);
        assert!(!c(None, Mode::Headless).contained);
        assert!(c(Some(&status(ww, Full, true, Off)), Mode::Headless).contained);
        assert!(c(Some(&status(ww, Full, false, Full)), Mode::Headless).contained);
        assert!(!c(Some(&status(ww, Full, false, Off)), Mode::Headless).contained);
        assert!(!c(Some(&status(ww, Off, true, Off)), Mode::Headless).contained);
        // Plan mode is kept read-only by a read-only sandbox, else by the policy.
        assert!(c(None, Mode::Plan).read_only);
        assert!(c(Some(&status(ww, Full, true, Off)), Mode::Plan).read_only);
        let ro = status(SandboxMode::ReadOnly, Full, true, Off);
        assert!(!c(Some(&ro), Mode::Plan).read_only);
        assert!(!c(None, Mode::Auto).read_only);
    }
}
