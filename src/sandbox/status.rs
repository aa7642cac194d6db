//! What the kernel really enforces of a sandbox policy ([`probe`], found out by running
//! the launcher in its probe mode) and the record of it that goes into result.json
//! ([`describe`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{SandboxMode, SandboxPolicy};

/// How far one part of the sandbox is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// Not asked for.
    Off,
    /// Enforced as asked.
    Full,
    /// Partly enforced; `notes` says what is missing.
    Partial,
    /// Asked for but not enforced (the kernel cannot); `notes` says why.
    None,
}

/// What the kernel enforces of a policy, as the launcher found when it set it up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    pub filesystem: Enforcement,
    pub network: Enforcement,
    /// The Landlock ABI version in use; `None` when Landlock is unavailable or unused.
    pub landlock_abi: Option<u8>,
    /// How the network is cut off: `netns`, `user+netns` or `landlock-tcp`.
    pub network_method: Option<String>,
    /// Why something is not fully enforced.
    pub notes: Vec<String>,
}

impl Probe {
    /// Nothing asked, nothing enforced.
    pub fn off() -> Self {
        Probe {
            filesystem: Enforcement::Off,
            network: Enforcement::Off,
            landlock_abi: None,
            network_method: None,
            notes: Vec::new(),
        }
    }

    /// Whether everything asked for is enforced.
    pub fn fully_enforced(&self) -> bool {
        [self.filesystem, self.network]
            .iter()
            .all(|e| matches!(e, Enforcement::Off | Enforcement::Full))
    }

    /// One sentence for a warning or an error when not everything is enforced.
    pub fn shortfall(&self) -> Option<String> {
        (!self.fully_enforced()).then(|| {
            format!(
                "the Bash sandbox is not fully enforced (filesystem: {}, network: {}): {}",
                self.filesystem.as_str(),
                self.network.as_str(),
                self.notes.join("; ")
            )
        })
    }
}

impl Enforcement {
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcement::Off => "off",
            Enforcement::Full => "full",
            Enforcement::Partial => "partial",
            Enforcement::None => "none",
        }
    }
}

/// Find out what the kernel enforces of `policy`, by running the launcher in probe mode
/// (the same set-up, then a report instead of a command). Blocking; takes a few ms.
pub fn probe(policy: &SandboxPolicy) -> Probe {
    if !policy.is_active() {
        return Probe::off();
    }
    let mut args = policy.launcher_args(&[]);
    args.insert(1, "--probe".into());
    let out = std::process::Command::new(&policy.launcher)
        .args(&args)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output();
    let failed = |why: String| Probe {
        filesystem: requested(policy.mode != SandboxMode::Off, Enforcement::None),
        network: requested(!policy.network, Enforcement::None),
        notes: vec![why],
        ..Probe::off()
    };
    match out {
        Ok(o) => serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
            failed(format!(
                "the sandbox launcher {} did not report ({}): {}",
                policy.launcher.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }),
        Err(e) => failed(format!(
            "cannot start the sandbox launcher {}: {e}",
            policy.launcher.display()
        )),
    }
}

/// `value` when the part was asked for, else [`Enforcement::Off`].
fn requested(asked: bool, value: Enforcement) -> Enforcement {
    if asked { value } else { Enforcement::Off }
}

/// The sandbox of a run, for result.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SandboxStatus {
    /// `off`, `workspace-write` or `read-only`, as the job asked.
    pub mode: SandboxMode,
    /// Whether commands could use the network, as the job asked.
    pub network: bool,
    /// Whether the job required the sandbox (`tools.bash.require_sandbox`).
    pub required: bool,
    /// What the kernel enforced of the filesystem part.
    pub filesystem_enforcement: Enforcement,
    /// What the kernel enforced of the network part.
    pub network_enforcement: Enforcement,
    /// The Landlock ABI version in use (`null`: Landlock unavailable or unused).
    pub landlock_abi: Option<u8>,
    /// How the network was cut off: `netns`, `user+netns` or `landlock-tcp`.
    pub network_method: Option<String>,
    /// Where commands could write (under a filesystem sandbox).
    pub writable: Vec<String>,
    /// Why something was not fully enforced.
    pub notes: Vec<String>,
}

/// The result.json record of a run's sandbox.
pub fn describe(probe: &Probe, policy: &SandboxPolicy) -> SandboxStatus {
    let writable = if policy.mode == SandboxMode::Off {
        Vec::new()
    } else {
        policy
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    };
    SandboxStatus {
        mode: policy.mode,
        network: policy.network,
        required: policy.require,
        filesystem_enforcement: probe.filesystem,
        network_enforcement: probe.network,
        landlock_abi: probe.landlock_abi,
        network_method: probe.network_method.clone(),
        writable,
        notes: probe.notes.clone(),
    }
}
