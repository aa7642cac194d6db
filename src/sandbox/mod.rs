//! The sandbox for shell commands the agent runs (Bash, background jobs), on Linux.
//!
//! The crate forbids `unsafe`, so nothing is set up between `fork` and `exec` in cn-run
//! itself. Instead a sandboxed command is started through cn-run again, as a small launcher
//! (the hidden `__sandbox` subcommand): it restricts *itself* — a new network namespace for
//! `network: false`, a Landlock ruleset that allows writes only under the writable folders —
//! and then `exec`s `bash -c COMMAND`. Landlock domains and namespaces are inherited, so
//! every process the command starts is held to the same rules, and the pid stays the same
//! (process groups and kills work as without a sandbox).
//!
//! Whether the kernel really enforces a policy is found out once per run with [`probe`]: it
//! runs the launcher in its `--probe` mode, which performs the same set-up and reports what
//! took effect instead of running a command. With `require`, the launcher also refuses to run
//! a command when the kernel cannot fully enforce the policy.

mod landlock;
mod launcher;
mod netns;
mod status;

pub use launcher::{REFUSED_EXIT, SandboxArgs, launcher_main};
pub use status::{Enforcement, Probe, SandboxStatus, describe, probe};

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The hidden subcommand that runs the launcher.
pub const LAUNCHER_SUBCOMMAND: &str = "__sandbox";

/// What a sandboxed command may write (`tools.bash.sandbox`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No filesystem sandbox.
    #[default]
    Off,
    /// Writes only in the workspace and the temporary folders (`/tmp`, `$TMPDIR`, …).
    WorkspaceWrite,
    /// No writes at all (except to `/dev/null` and the like).
    ReadOnly,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }
}

/// How the sandbox for shell commands is set up for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Whether commands may use the network (`false`: a new, empty network namespace).
    pub network: bool,
    /// Folders (and device files) writable under the filesystem sandbox.
    pub writable: Vec<PathBuf>,
    /// Refuse to run a command when the kernel cannot fully enforce the policy.
    pub require: bool,
    /// The cn-run binary that acts as the launcher. Default `/proc/self/exe` (the running
    /// cn-run, even if its file was replaced meanwhile); tests point it at the built binary.
    pub launcher: PathBuf,
}

/// Device files every sandboxed command may write, whatever the mode.
const ALWAYS_WRITABLE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
/// Temporary folders writable under `workspace-write` (besides `$TMPDIR`).
const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];
/// Terminal devices writable under `workspace-write`.
const TERMINAL: &[&str] = &["/dev/pts", "/dev/ptmx"];

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy::off()
    }
}

impl SandboxPolicy {
    /// No sandbox: commands run as they always did.
    pub fn off() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            writable: Vec::new(),
            require: false,
            launcher: PathBuf::from("/proc/self/exe"),
        }
    }

    /// The policy for `mode` and `network` in `workspace`. `env` is the commands'
    /// environment (its `TMPDIR` is writable under `workspace-write`).
    pub fn new(
        mode: SandboxMode,
        network: bool,
        workspace: &Path,
        env: &[(String, String)],
    ) -> Self {
        let mut writable: Vec<PathBuf> = ALWAYS_WRITABLE.iter().map(PathBuf::from).collect();
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(workspace.to_path_buf());
            writable.extend(TEMP_DIRS.iter().chain(TERMINAL).map(PathBuf::from));
            let tmpdir = env.iter().find(|(k, _)| k == "TMPDIR").map(|(_, v)| v);
            let tmpdir = tmpdir.map(PathBuf::from).filter(|d| d.is_absolute());
            if let Some(dir) = tmpdir.filter(|d| !writable.contains(d)) {
                writable.push(dir);
            }
        }
        SandboxPolicy {
            mode,
            network,
            writable,
            ..SandboxPolicy::off()
        }
    }

    /// Fail instead of running unsandboxed when the kernel cannot enforce the policy.
    pub fn required(mut self, require: bool) -> Self {
        self.require = require;
        self
    }

    /// Use this binary as the launcher (tests: `env!("CARGO_BIN_EXE_cn-run")`).
    pub fn with_launcher(mut self, launcher: impl Into<PathBuf>) -> Self {
        self.launcher = launcher.into();
        self
    }

    /// Whether commands go through the launcher at all.
    pub fn is_active(&self) -> bool {
        self.mode != SandboxMode::Off || !self.network
    }

    /// The launcher's arguments (after the program) for running `argv` under this policy.
    pub(crate) fn launcher_args(&self, argv: &[&OsStr]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![LAUNCHER_SUBCOMMAND.into()];
        args.extend(["--mode".into(), self.mode.as_str().into()]);
        if self.mode != SandboxMode::Off {
            for dir in &self.writable {
                args.push("--write".into());
                args.push(dir.clone().into_os_string());
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

    /// The program and arguments that run `argv` under this policy: `argv` itself when the
    /// policy is off, else the launcher wrapped around it.
    pub fn command_line(&self, argv: &[&OsStr]) -> (OsString, Vec<OsString>) {
        match argv.split_first() {
            Some((program, rest)) if !self.is_active() => (
                program.to_os_string(),
                rest.iter().map(|a| a.to_os_string()).collect(),
            ),
            _ => (
                self.launcher.clone().into_os_string(),
                self.launcher_args(argv),
            ),
        }
    }
}

#[cfg(test)]
mod tests;
