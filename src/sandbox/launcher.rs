//! The child side of the sandbox: `cn-run __sandbox [--mode M] [--write PATH]…
//! [--no-network] [--require] [--probe] -- PROGRAM ARGS…`.
//!
//! The process restricts itself — network namespace first (writing the uid map needs
//! `/proc`), then Landlock — and `exec`s the program, which keeps the pid, the process group,
//! the working directory, the environment and the pipes the parent set up. With `--probe` it
//! prints what took effect as JSON instead; with `--require` it refuses (exit 125) to run a
//! command the kernel cannot fully sandbox.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use super::{Enforcement, Probe, SandboxMode, landlock, netns};

/// Exit code when `--require` is given and the sandbox cannot be fully enforced.
pub const REFUSED_EXIT: i32 = 125;
/// Exit code when the program cannot be started.
const EXEC_FAILED_EXIT: i32 = 127;

/// The launcher's command line (a hidden subcommand; cn-run builds it, people do not).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SandboxArgs {
    /// What the command may write.
    #[arg(long, value_enum, default_value_t = SandboxMode::Off)]
    pub mode: SandboxMode,
    /// A folder or file the command may write beneath (repeatable).
    #[arg(long = "write", value_name = "PATH")]
    pub write: Vec<PathBuf>,
    /// Run the command in a new network namespace (no network).
    #[arg(long)]
    pub no_network: bool,
    /// Refuse to run the command unless the kernel enforces everything asked.
    #[arg(long)]
    pub require: bool,
    /// Set up, then print what took effect as JSON instead of running a command.
    #[arg(long)]
    pub probe: bool,
    /// The program and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Run the launcher; returns only when it did not `exec` (probe, refusal, failure).
pub fn launcher_main(args: &SandboxArgs) -> i32 {
    let probe = set_up(args);
    if args.probe {
        let json = serde_json::to_string(&probe).unwrap_or_default();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{json}");
        let _ = out.flush();
        return 0;
    }
    if args.require && !probe.launcher_complete() {
        let why = probe.notes.join("; ");
        say(&format!(
            "refusing to run the command: the sandbox is not fully enforced: {why}"
        ));
        return REFUSED_EXIT;
    }
    let Some((program, rest)) = args.command.split_first() else {
        say("no command given after --");
        return EXEC_FAILED_EXIT;
    };
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest).env("CN_RUN_SANDBOX", args.mode.as_str());
    if args.no_network {
        cmd.env("CN_RUN_SANDBOX_NETWORK", "off");
    }
    let err = cmd.exec();
    say(&format!("cannot run {}: {err}", program.to_string_lossy()));
    EXEC_FAILED_EXIT
}

/// A message for whoever reads the command's stderr.
fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "cn-run sandbox: {message}");
}

/// Apply the policy to this process and report what took effect.
fn set_up(args: &SandboxArgs) -> Probe {
    let mut probe = Probe::off();
    let mut tcp_fallback = false;
    if args.no_network {
        match netns::isolate() {
            Ok(iso) => {
                probe.network = Enforcement::Full;
                probe.network_method = Some(iso.method.to_owned());
                probe.notes.extend(iso.note);
            }
            Err(why) => {
                probe.network = Enforcement::None;
                probe.notes.push(why.to_string());
                tcp_fallback = true;
            }
        }
    }
    if args.mode != SandboxMode::Off {
        match landlock::restrict_writes(&args.write) {
            Ok(applied) => {
                probe.filesystem = applied.enforcement;
                probe.landlock_abi = applied.abi;
                probe.notes.extend(applied.note);
            }
            Err(why) => {
                probe.filesystem = Enforcement::None;
                probe.notes.push(why.to_string());
            }
        }
    }
    if tcp_fallback {
        block_tcp(&mut probe);
    }
    if args.mode != SandboxMode::Off {
        harden(&mut probe);
    }
    probe
}

/// Last, once nothing more needs a capability: the Unix-socket filter, then no capability.
fn harden(probe: &mut Probe) {
    match super::seccomp::apply() {
        Ok(()) => probe.no_unix_sockets = true,
        Err(why) => probe.notes.push(why.to_string()),
    }
    match super::no_caps::drop_all() {
        Ok(()) => probe.no_capabilities = super::no_caps::verified(),
        Err(why) => probe.notes.push(format!("cannot drop capabilities: {why}")),
    }
}

/// No network namespace: block TCP with Landlock at least (UDP and others stay open).
fn block_tcp(probe: &mut Probe) {
    match landlock::deny_tcp() {
        Ok(applied) if applied.enforcement == Enforcement::Full => {
            probe.network = Enforcement::Partial;
            probe.network_method = Some("landlock-tcp".to_owned());
            probe.landlock_abi = probe.landlock_abi.or(applied.abi);
            probe.notes.push(
                "TCP connections and listening sockets are blocked with Landlock instead; \
                 UDP (DNS included) and other protocols are not"
                    .to_owned(),
            );
        }
        Ok(applied) => probe.notes.extend(applied.note),
        Err(why) => probe.notes.push(why.to_string()),
    }
}
