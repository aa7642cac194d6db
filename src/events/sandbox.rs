//! The containment record events and result.json carry (`sandbox`): its types live here
//! with the other payloads, so the event schema imports nothing from the sandbox that
//! makes it; how each value is found stays in the sandbox module, which re-exports them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    pub mechanism: ContainedBy,
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

/// One protection of the default profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    /// Everything outside the workspace (and the job's extra folders) is read-only.
    ReadOnlyOutsideWorkspace,
    /// `/tmp`, `/var/tmp` and `/dev/shm` are the run's own, not the host's.
    PrivateTmp,
    /// The credential locations of the one list are not readable.
    HiddenCredentials,
    /// An own PID namespace with a fresh `/proc`: nothing outlives the call.
    PidNamespace,
    /// No network (asked for unless the job allows it).
    NoNetwork,
    /// The environment comes from an allow-list.
    EnvAllowList,
    /// Commands hold no capability and cannot gain one (`no_new_privs`), root included.
    NoCapabilities,
    /// Commands cannot make a Unix socket, so reach none of the host's (path or abstract).
    NoHostSockets,
    /// The git folders under the workspace are read-only (or, under `git: commit`, their
    /// hooks, config and info).
    ReadOnlyGit,
    /// The run's own folder (and the workspace's `.cn-run`) is read-only.
    ReadOnlyRunFolder,
    /// Memory, processes, temporary space and file size are bounded.
    BoundedResources,
}

/// `tools.bash.git`: what contained commands may do to the repository's git folders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GitAccess {
    /// Read-only (the default): `git status`, `log` and `diff` work; `commit` does not.
    #[default]
    ReadOnly,
    /// Commits, branches and the index are writable; hooks, config and info stay read-only.
    Commit,
}

/// What a sandboxed command may write (`tools.bash.sandbox`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No containment: commands run as cn-run does, with its whole environment.
    Off,
    /// The default profile: writes only in the workspace (and the run's private temporary
    /// folders).
    #[default]
    WorkspaceWrite,
    /// As `workspace-write`, but the workspace is read-only too.
    ReadOnly,
}

/// The limits of one run's commands, in bytes and processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Memory of all the run's commands together (cgroup), or of each process (rlimit).
    pub memory_bytes: u64,
    /// Processes (and threads) at once.
    pub processes: u64,
    /// Size of each of the private `/tmp`, `/var/tmp` and `/dev/shm`.
    pub tmp_bytes: u64,
    /// Largest file a command may write.
    pub file_size_bytes: u64,
}

/// How a limit was made to bind, for result.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LimitsRecord {
    #[serde(flatten)]
    pub limits: Limits,
    /// `cgroup` (all the run's commands together) or `rlimit-per-process`.
    pub memory_by: MemoryBy,
    /// `cgroup` (the run), `rlimit-per-command` (an ordinary user's user namespace per
    /// command), `pid-namespace` (root without a writable cgroup: the run's PID namespace's
    /// `pid_max`, Linux 6.14 or later) or `none` (root otherwise: the kernel exempts uid 0
    /// from `RLIMIT_NPROC`).
    pub processes_by: ProcessesBy,
}

/// What contains a run's commands (`sandbox.mechanism`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ContainedBy {
    /// The run's bubblewrap (or one per command).
    Bubblewrap,
    /// The fallback launcher (Landlock, namespaces where it can make them).
    Landlock,
    /// Nothing: the sandbox is off, or no mechanism could start.
    #[default]
    None,
    /// Still being set up (`run.started` before `sandbox.established`).
    Pending,
    /// The run ended before any command needed it, so it was never set up.
    NotNeeded,
}

impl ContainedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            ContainedBy::Bubblewrap => "bubblewrap",
            ContainedBy::Landlock => "landlock",
            ContainedBy::None => "none",
            ContainedBy::Pending => "pending",
            ContainedBy::NotNeeded => "not-needed",
        }
    }
}

/// What bounds the memory of a run's commands (`sandbox.limits.memory_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryBy {
    /// The run's cgroup: all its commands together.
    Cgroup,
    /// `RLIMIT_DATA` on each process.
    RlimitPerProcess,
}

/// What bounds the process count of a run's commands (`sandbox.limits.processes_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessesBy {
    /// The run's cgroup.
    Cgroup,
    /// `RLIMIT_NPROC` in an ordinary user's user namespace per command.
    RlimitPerCommand,
    /// The `pid_max` of the run's PID namespace (root without a writable cgroup, Linux 6.14+).
    PidNamespace,
    /// Nothing (root otherwise: the kernel exempts uid 0 from `RLIMIT_NPROC`).
    None,
}

display_as_str!(ContainedBy);
