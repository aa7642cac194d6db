//! Containment for every command a run starts on the model's behalf (Bash calls, background
//! jobs, the job's checks), on Linux. Default on: `tools.bash.sandbox: workspace-write`.
//!
//! The mechanism is bubblewrap ([`bwrap`]): the workspace writable, everything else
//! read-only, private temporary folders per run, credential locations hidden ([`hidden`]),
//! an own PID namespace with a fresh `/proc` (nothing outlives the call), no network unless
//! the job allows it, and an environment from an allow-list ([`env`]). Where cn-run may
//! (root), the network, IPC and UTS namespaces are made once per run ([`run_net`]) and
//! shared by its commands; with `network: [hosts]` a proxy in that namespace ([`proxy`])
//! is the only way out, to the listed hosts ([`hosts`]).
//!
//! Where bubblewrap is missing or the kernel refuses it, the older self-exec launcher (the
//! hidden `__sandbox` subcommand: Landlock for writes, a network namespace) enforces what it
//! can, and the run says which protections are in force and which are missing ([`status`]);
//! `require_sandbox` refuses to run then.

mod bwrap;
mod call;
mod cgroup;
mod deferred;
mod entry;
pub mod env;
mod error;
pub mod git_view;
mod guard;
pub mod hidden;
pub mod hosts;
mod landlock;
mod launcher;
pub mod limits;
mod loopback;
mod netns;
mod no_caps;
mod pid_bound;
mod pin;
mod proxy;
mod record;
mod relay;
mod report;
mod run_net;
mod seccomp;
mod spawner;
mod status;

pub use crate::events::{
    ContainedBy, GitAccess, Limits, LimitsRecord, MemoryBy, ProcessesBy, Protection, SandboxMode,
    SandboxStatus,
};
pub use bwrap::find as find_bwrap;
pub use call::call_main;
pub use cgroup::RunCgroup;
pub use deferred::{Deferred, Established, OnReady};
pub use entry::{CALL_BINARY, CALL_SUBCOMMAND, RunBox};
pub use error::SandboxError;
pub use hosts::HostRule;
pub use launcher::{REFUSED_EXIT, SandboxArgs, launcher_main};
pub use pin::Pinned;
pub use record::describe;
pub use relay::RunRelay;
pub use run_net::RunNet;
pub use status::{Enforcement, Probe, establish, probe, settle_unused};

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The hidden subcommand that runs the launcher.
pub const LAUNCHER_SUBCOMMAND: &str = "__sandbox";

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }
}

/// Which mechanism contains the commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap, at this path: the full profile.
    Bubblewrap(PathBuf),
    /// The self-exec launcher (Landlock + a network namespace): a part of the profile.
    Landlock,
}

/// How the commands of one run are contained.
#[derive(Debug, Clone)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Whether commands may use the network (`false`: a new, empty network namespace).
    pub network: bool,
    /// With `network: false`, the hosts commands may still reach through cn-run's proxy.
    pub hosts: Vec<HostRule>,
    /// The run's shared namespaces (and proxy), set by [`establish`] where it could make them.
    pub run_net: Option<Arc<RunNet>>,
    /// The run's one bubblewrap that commands enter ([`entry`]), where [`establish`] could
    /// start it; else each command gets a bubblewrap of its own. Before `cgroup`: it ends
    /// the run's processes before their cgroup is removed.
    pub run_box: Option<Arc<RunBox>>,
    /// The run's cgroup (root, where one can be made): memory and processes for the run.
    pub cgroup: Option<Arc<RunCgroup>>,
    /// The per-call supervisor, opened when the run starts ([`pin`]).
    pub pinned: Option<Arc<Pinned>>,
    /// Memory, processes, temporary space and file size ([`limits`]).
    pub limits: Limits,
    /// What commands may do to the git folders (`tools.bash.git`).
    pub git: GitAccess,
    /// Paths under the writable folders that stay read-only: git folders ([`git_view`]).
    pub git_read_only: Vec<PathBuf>,
    /// Under `git: commit`, the git folders bound over themselves: not movable.
    pub git_anchors: Vec<PathBuf>,
    /// The run's own records (its output folder, the workspace's `.cn-run`): read-only.
    pub records: Vec<PathBuf>,
    /// With a host list where cn-run cannot make the shared namespaces (an ordinary user):
    /// the proxy on a Unix socket that each command's supervisor relays to ([`relay`]).
    pub relay: Option<Arc<RunRelay>>,
    /// Folders writable under `workspace-write`: the workspace and the job's extra ones.
    pub writable: Vec<PathBuf>,
    /// Credential locations covered (see [`hidden`]).
    pub hidden: Vec<PathBuf>,
    /// Variable names the job passes to commands besides the allow-list (`tools.bash.env`).
    pub env_names: Vec<String>,
    /// A private host folder for the proxy's socket (an ordinary user's host list), removed
    /// when the last copy of the policy is dropped.
    pub private_tmp: Option<Arc<tempfile::TempDir>>,
    /// Refuse to run a command when the kernel cannot enforce the whole profile.
    pub require: bool,
    pub mechanism: Mechanism,
    /// Whether [`establish`] found the whole profile enforced (see [`Self::fully_enforced`]).
    pub established_fully: bool,
    /// The cn-run binary that acts as the fallback launcher. Default `/proc/self/exe` (the
    /// running cn-run, even if its file was replaced meanwhile); tests point it at the build.
    pub launcher: PathBuf,
}

/// Device files every command under the fallback launcher may write, whatever the mode.
const ALWAYS_WRITABLE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
/// Temporary folders the fallback launcher leaves writable (it cannot make private ones).
const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "/dev/pts", "/dev/ptmx"];

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy::off()
    }
}

impl SandboxPolicy {
    /// No containment: commands run as they always did.
    pub fn off() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            hosts: Vec::new(),
            run_net: None,
            run_box: None,
            cgroup: None,
            pinned: None,
            limits: Limits::default(),
            git: GitAccess::default(),
            git_read_only: Vec::new(),
            git_anchors: Vec::new(),
            records: Vec::new(),
            relay: None,
            writable: Vec::new(),
            hidden: Vec::new(),
            env_names: Vec::new(),
            private_tmp: None,
            require: false,
            mechanism: Mechanism::Landlock,
            established_fully: false,
            launcher: PathBuf::from("/proc/self/exe"),
        }
    }

    /// The policy for `mode` and `network` in `workspace`. `env` is the commands'
    /// environment (its `PATH` finds bubblewrap, its `HOME` the credential locations).
    pub fn new(
        mode: SandboxMode,
        network: bool,
        workspace: &Path,
        env: &[(String, String)],
    ) -> Self {
        let var = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let home = var("HOME").map(PathBuf::from);
        let mechanism = match bwrap::find(var("PATH").map(OsStr::new)) {
            Some(path) => Mechanism::Bubblewrap(path),
            None => Mechanism::Landlock,
        };
        let active = mode != SandboxMode::Off;
        SandboxPolicy {
            mode,
            network,
            writable: vec![workspace.to_path_buf()],
            // Not inside the workspace: that is the model's to read and write anyway.
            hidden: if active {
                let mut h = hidden::existing(home.as_deref(), &[]);
                h.retain(|p| !p.starts_with(workspace));
                h
            } else {
                Vec::new()
            },
            mechanism,
            ..SandboxPolicy::off()
        }
    }

    /// Give back credential locations the job needs (`tools.bash.readable`).
    pub fn with_readable(mut self, readable: &[PathBuf]) -> Self {
        self.hidden.retain(|h| {
            !readable
                .iter()
                .any(|r| h.starts_with(r) || r.starts_with(h))
        });
        self
    }

    /// Let commands reach `hosts` (and no other) through cn-run's proxy; needs `network`
    /// false.
    pub fn with_hosts(mut self, hosts: Vec<HostRule>) -> Self {
        if !hosts.is_empty() {
            self.network = false;
        }
        self.hosts = hosts;
        self
    }

    /// What commands may do to the git folders, and the folders themselves read-only
    /// (found now beneath the writable folders: call after they are all set).
    pub fn with_git(mut self, git: GitAccess) -> Self {
        self.git = git;
        if self.mode == SandboxMode::WorkspaceWrite {
            self.git_read_only = git_view::protected(&self.writable, git);
            self.git_anchors = git_view::anchors(&self.writable, git);
        }
        self
    }

    /// Keep `records` (the run's folders) read-only for commands: those in or over a
    /// writable folder (call after the writable folders are set; one elsewhere is read-only,
    /// or out of view under the private `/tmp`, already).
    pub fn with_records(mut self, records: Vec<PathBuf>) -> Self {
        let writable = &self.writable;
        self.records = records
            .into_iter()
            .filter(|r| {
                writable
                    .iter()
                    .any(|w| r.starts_with(w) || w.starts_with(r))
            })
            .collect();
        self
    }

    /// Bound the run's commands by `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Fail instead of running with less than the whole profile.
    pub fn required(mut self, require: bool) -> Self {
        self.require = require;
        self
    }

    /// Use this binary as the fallback launcher (tests: `env!("CARGO_BIN_EXE_cn-run")`).
    pub fn with_launcher(mut self, launcher: impl Into<PathBuf>) -> Self {
        self.launcher = launcher.into();
        self
    }

    /// Whether commands run with the whole profile, as [`establish`] found (false before it
    /// ran, and under `off`): the query for "is running repository code contained?".
    pub fn fully_enforced(&self) -> bool {
        self.established_fully
    }

    /// Whether commands are contained at all.
    pub fn is_active(&self) -> bool {
        self.mode != SandboxMode::Off || !self.network
    }

    /// The environment a command gets: `env` itself when off; else the allow-list, the
    /// job's names, and `TMPDIR=/tmp` (the private one) under bubblewrap.
    pub fn command_env(&self, env: &[(String, String)]) -> Vec<(String, String)> {
        if self.mode == SandboxMode::Off {
            return env.to_vec();
        }
        let mut kept = env::filter(env, &self.env_names);
        if matches!(self.mechanism, Mechanism::Bubblewrap(_)) {
            kept.push(("TMPDIR".to_owned(), "/tmp".to_owned()));
        } else {
            kept.extend(env.iter().filter(|(k, _)| k == "TMPDIR").cloned());
        }
        if let Some(port) = self.proxy_port() {
            for (name, value) in env::proxy_vars(port) {
                if !kept.iter().any(|(k, _)| *k == name) {
                    kept.push((name, value));
                }
            }
        }
        kept
    }

    /// The proxy's port inside the run's network namespace, when it runs.
    pub fn proxy_port(&self) -> Option<u16> {
        let relayed = self.relay.as_ref().map(|r| r.proxy.port);
        self.run_net
            .as_ref()
            .and_then(|n| n.proxy_port())
            .or(relayed)
    }

    /// How many requests the proxy refused so far (see [`Self::refused_since`]).
    pub fn refusal_mark(&self) -> usize {
        self.refusals().map_or(0, |r| r.mark())
    }

    /// The proxy's refusals after `mark`, one sentence each.
    pub fn refused_since(&self, mark: usize) -> Vec<String> {
        self.refusals().map_or_else(Vec::new, |r| r.since(mark))
    }

    fn refusals(&self) -> Option<Arc<proxy::Refusals>> {
        let relayed = self.relay.as_ref().map(|r| Arc::clone(&r.proxy.refusals));
        self.run_net.as_ref().and_then(|n| n.refusals()).or(relayed)
    }

    /// Start `cmd` (built by [`Self::command_line`]): from the thread inside the run's one
    /// sandbox, or from the run's namespace thread, when there is one, so the command starts
    /// in the run's namespaces. Inside a tokio runtime.
    pub fn spawn(
        &self,
        mut cmd: tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        let Some(spawner) = self.spawner() else {
            return cmd.spawn();
        };
        let handle = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        spawner.run(move || {
            let _inside = handle.enter();
            cmd.spawn()
        })?
    }

    /// `argv` under the per-call supervisor with the run's options (relay, limits, cgroup)
    /// and `extra` ones (`--report`, `--hold`).
    /// Without a pinned supervisor (a policy [`establish`] has not seen): `argv` itself.
    pub(crate) fn supervised(&self, extra: &[&str], argv: &[&OsStr]) -> Vec<OsString> {
        let Some(pinned) = &self.pinned else {
            return argv.iter().map(|a| a.to_os_string()).collect();
        };
        let mut v = pinned.command();
        if self.relay.is_some() {
            v.extend(["--relay".into(), relay::SOCKET_INSIDE.into()]);
        }
        v.extend(limits::rlimit_args(&self.limits, self.cgroup.is_some()));
        if let Some(cgroup) = &self.cgroup {
            v.extend(cgroup.args(self.run_net.is_some()));
        }
        if pid_bound::per_command(self) && !extra.contains(&"--hold") {
            v.extend([
                "--own-pid-max".into(),
                self.limits.processes.to_string().into(),
                "--ipc-max".into(),
                self.limits.memory_bytes.to_string().into(),
            ]);
        }
        v.extend(extra.iter().map(OsString::from));
        if !argv.is_empty() {
            v.push("--".into());
            v.extend(argv.iter().map(|a| a.to_os_string()));
        }
        v
    }

    /// The thread commands start from, when they must start in namespaces of the run's: the
    /// one inside the run's sandbox, else the run's namespace thread.
    pub(crate) fn spawner(&self) -> Option<&spawner::Spawner> {
        if !self.is_active() {
            return None;
        }
        match (&self.run_box, &self.run_net) {
            (Some(run_box), _) if self.mode != SandboxMode::Off => Some(run_box.spawner()),
            (_, Some(net)) => Some(net.spawner()),
            _ => None,
        }
    }

    /// The fallback launcher's arguments (after the program) for running `argv`.
    pub(crate) fn launcher_args(&self, argv: &[&OsStr]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![LAUNCHER_SUBCOMMAND.into()];
        args.extend(["--mode".into(), self.mode.as_str().into()]);
        if self.mode != SandboxMode::Off {
            for dir in self.launcher_writable() {
                args.push("--write".into());
                args.push(dir.into_os_string());
            }
        }
        if !self.network {
            args.push("--no-network".into());
        }
        if self.require {
            args.push("--require".into());
        }
        args.push("--".into());
        args.extend(argv.iter().map(|a| a.to_os_string()));
        args
    }

    /// What the fallback launcher leaves writable: device sinks, and under
    /// `workspace-write` the writable folders and the (shared) temporary folders.
    fn launcher_writable(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = ALWAYS_WRITABLE.iter().map(PathBuf::from).collect();
        if self.mode == SandboxMode::WorkspaceWrite {
            dirs.extend(self.writable.iter().cloned());
            dirs.extend(TEMP_DIRS.iter().map(PathBuf::from));
            dirs.push(std::env::temp_dir());
        }
        dirs
    }

    /// The program and arguments that run `argv` in `cwd` under this policy: `argv` itself
    /// when off, else bubblewrap or the launcher wrapped around it.
    pub fn command_line(&self, argv: &[&OsStr], cwd: &Path) -> (OsString, Vec<OsString>) {
        match (argv.split_first(), &self.mechanism) {
            (Some((program, rest)), _) if !self.is_active() => (
                program.to_os_string(),
                rest.iter().map(|a| a.to_os_string()).collect(),
            ),
            (_, Mechanism::Bubblewrap(path)) if self.mode != SandboxMode::Off => {
                match &self.run_box {
                    Some(_) => split(self.supervised(&[], argv)),
                    None => (path.clone().into_os_string(), bwrap::args(self, cwd, argv)),
                }
            }
            _ => (
                self.launcher.clone().into_os_string(),
                self.launcher_args(argv),
            ),
        }
    }
}

/// A program and its arguments.
fn split(mut v: Vec<OsString>) -> (OsString, Vec<OsString>) {
    if v.is_empty() {
        return (OsString::new(), v);
    }
    let program = v.remove(0);
    (program, v)
}

#[cfg(test)]
mod tests;
