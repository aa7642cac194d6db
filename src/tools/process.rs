//! Run one shell command the way every cn-run tool does: `bash -c` (not a login shell) in
//! the workspace, stdin closed, its own process group, a scrubbed environment, an inactivity
//! timeout, bounded output, and nothing left running when it returns.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdout, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::output::{Cut, TailBuffer};
use crate::sandbox::SandboxPolicy;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    pub stdout: String,
    pub stdout_cut: Cut,
    pub stderr: String,
    pub stderr_cut: Cut,
    /// The exit code; `None` when it was killed (timeout, cancel or a signal).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// The shell exited but left processes running in its group; they were killed.
    pub leftovers_killed: bool,
    /// Requests the sandbox's proxy refused while the command ran (`network: [hosts]`).
    pub network_refused: Vec<String>,
}

/// Bounds for one command.
#[derive(Debug, Clone, Copy)]
pub struct CommandLimits {
    pub inactivity: Duration,
    pub max_chars: usize,
    pub max_lines: usize,
}

/// The `bash -c` command cn-run runs, configured but not spawned; under an active
/// `sandbox` it is started through bubblewrap (or the fallback launcher), with the
/// sandbox's environment (see [`SandboxPolicy::command_env`]).
pub(crate) fn shell_command(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    sandbox: &SandboxPolicy,
) -> Command {
    let argv = [OsStr::new("bash"), OsStr::new("-c"), OsStr::new(command)];
    let (program, args) = sandbox.command_line(&argv, cwd);
    let env = sandbox.command_env(env);
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kill every process in the group `pgid` (the child was spawned as its own group leader).
/// Takes the id saved at spawn: once the leader has been waited for, `Child::id` is `None`,
/// but the group lives on as long as anything the shell started is still in it. Returns
/// whether the group had a process to kill.
pub(crate) fn kill_group(pgid: Option<u32>) -> bool {
    signal_group(pgid, rustix::process::Signal::KILL)
}

pub(crate) fn signal_group(pgid: Option<u32>, signal: rustix::process::Signal) -> bool {
    pgid.and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::kill_process_group(pid, signal).is_ok())
}

/// A call stopped before its shell ended (timeout, cancel). In the run's one sandbox the
/// per-call supervisor is asked first (SIGTERM): it kills everything the command started,
/// what left the process group included, before the group is killed.
async fn stop(child: &mut tokio::process::Child, pgid: Option<u32>, sandbox: &SandboxPolicy) {
    if sandbox.run_box.is_some() && signal_group(pgid, rustix::process::Signal::TERM) {
        let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    }
    let _ = kill_group(pgid);
    let _ = child.start_kill();
    let _ = child.wait().await;
}

async fn read_some<R: AsyncReadExt + Unpin>(reader: &mut Option<R>, buf: &mut [u8]) -> usize {
    match reader {
        Some(r) => r.read(buf).await.unwrap_or(0),
        None => std::future::pending().await,
    }
}

struct Pipes {
    out: Option<ChildStdout>,
    err: Option<ChildStderr>,
}

/// Run `command` to completion (or timeout, or cancellation) and collect bounded output.
pub async fn run_command(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    limits: CommandLimits,
    cancel: &CancellationToken,
) -> std::io::Result<CommandOutcome> {
    let off = SandboxPolicy::off();
    run_command_sandboxed(command, cwd, env, limits, cancel, &off).await
}

/// [`run_command`] under `sandbox` (see [`crate::sandbox`]).
pub async fn run_command_sandboxed(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    limits: CommandLimits,
    cancel: &CancellationToken,
    sandbox: &SandboxPolicy,
) -> std::io::Result<CommandOutcome> {
    let refusal_mark = sandbox.refusal_mark();
    let mut child = sandbox.spawn(shell_command(command, cwd, env, sandbox))?;
    let pgid = child.id();
    let mut pipes = Pipes {
        out: child.stdout.take(),
        err: child.stderr.take(),
    };
    let mut out = TailBuffer::new(limits.max_chars, limits.max_lines);
    let mut err = TailBuffer::new(limits.max_chars, limits.max_lines);
    let (mut buf_out, mut buf_err) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let mut deadline = Instant::now() + limits.inactivity;
    let mut status = None;
    let (mut timed_out, mut cancelled, mut leftovers_killed) = (false, false, false);
    loop {
        if status.is_some() && pipes.out.is_none() && pipes.err.is_none() {
            break;
        }
        tokio::select! {
            n = read_some(&mut pipes.out, &mut buf_out) => {
                if n == 0 { pipes.out = None } else { out.push(&buf_out[..n]); deadline = Instant::now() + limits.inactivity; }
            }
            n = read_some(&mut pipes.err, &mut buf_err) => {
                if n == 0 { pipes.err = None } else { err.push(&buf_err[..n]); deadline = Instant::now() + limits.inactivity; }
            }
            st = child.wait(), if status.is_none() => {
                // The shell is done: whatever it left running in its group goes too, so no
                // orphan outlives the call and the pipes close.
                leftovers_killed = kill_group(pgid);
                status = Some(st?);
                deadline = deadline.min(Instant::now() + Duration::from_secs(2));
            }
            _ = sleep_until(deadline) => {
                if status.is_none() { timed_out = true; }
                break;
            }
            _ = cancel.cancelled() => {
                cancelled = true;
                break;
            }
        }
    }
    if status.is_none() {
        stop(&mut child, pgid, sandbox).await;
    } else {
        let _ = kill_group(pgid);
    }
    let (stdout, stdout_cut) = out.finish();
    let (stderr, stderr_cut) = err.finish();
    Ok(CommandOutcome {
        stdout,
        stdout_cut,
        stderr,
        stderr_cut,
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        cancelled,
        leftovers_killed,
        network_refused: sandbox.refused_since(refusal_mark),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(secs: u64) -> CommandLimits {
        CommandLimits {
            inactivity: Duration::from_secs(secs),
            max_chars: 50_000,
            max_lines: 1_000,
        }
    }

    /// Runs `command` in the temp folder with only PATH, within `limits`.
    async fn run(command: &str, limits: CommandLimits) -> CommandOutcome {
        let dir = std::env::temp_dir();
        let env = vec![("PATH".to_owned(), std::env::var("PATH").unwrap())];
        run_command(command, &dir, &env, limits, &CancellationToken::new())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn captures_output_and_exit_code() {
        let o = run("echo out; echo err >&2; exit 3", limits(10)).await;
        assert_eq!(o.stdout, "out\n");
        assert_eq!(o.stderr, "err\n");
        assert_eq!(o.exit_code, Some(3));
        assert!(!o.leftovers_killed);
    }

    #[tokio::test]
    async fn inactivity_timeout_kills_the_command() {
        let lim = CommandLimits {
            inactivity: Duration::from_millis(300),
            ..limits(1)
        };
        let start = std::time::Instant::now();
        let o = run("echo start; sleep 30", lim).await;
        assert!(o.timed_out);
        assert_eq!(o.stdout, "start\n");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn background_children_do_not_hold_the_call_open() {
        let start = std::time::Instant::now();
        let o = run("sleep 30 & echo done", limits(60)).await;
        assert_eq!(o.stdout, "done\n");
        assert!(o.leftovers_killed, "the sleep was left running and killed");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[tokio::test]
    async fn stdin_is_closed() {
        let o = run("cat; echo eof", limits(10)).await;
        assert_eq!(o.stdout, "eof\n");
    }
}
