//! The process side of a stdio MCP server: how it is spawned (minimal environment, own process
//! group), the guard that kills its whole group when the hub lets go of it, and a bounded tail
//! of its stderr so a failure message can quote what the server said.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, Command};
use tokio::task::JoinHandle;

/// Lines of stderr kept per server.
const TAIL_LINES: usize = 20;
/// Characters kept of one stderr line.
const LINE_CHARS: usize = 400;

/// Whether a variable of the run's environment reaches a stdio server: the program search
/// path, the home folder and the locale, nothing else (no tokens, no cloud credentials).
/// Anything more is the job's to give, by name, in the server's `env:`.
pub(crate) fn passes_to_server(name: &str) -> bool {
    matches!(name, "PATH" | "HOME" | "LANG" | "LANGUAGE") || name.starts_with("LC_")
}

/// The command for a stdio server: `env_clear()`, then the minimal part of the run's
/// environment ([`passes_to_server`]), then the server's own variables; its own process
/// group, so a kill reaches its children too.
pub(crate) fn command(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    base_env: &[(String, String)],
) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(
            base_env
                .iter()
                .filter(|(k, _)| passes_to_server(k))
                .map(|(k, v)| (k, v)),
        )
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kills the server's process group when dropped, so no server outlives the run even when
/// the hub is dropped without a shutdown (or a start is abandoned half-way).
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<rustix::process::Pid>,
}

impl GroupGuard {
    pub(crate) fn new(pid: Option<u32>) -> Self {
        let pgid = pid
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw);
        GroupGuard { pgid }
    }

    pub(crate) fn kill(&self) {
        if let Some(pgid) = self.pgid {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last lines a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    fn push(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text: String = text.trim_end().chars().take(LINE_CHARS).collect();
        if text.is_empty() {
            return;
        }
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(text);
    }

    /// The kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// `"; last stderr lines: a | b"` for a message, or `""` when the server said nothing.
    pub(crate) fn note(&self, max_lines: usize) -> String {
        let lines = self.lines();
        if lines.is_empty() {
            return String::new();
        }
        let start = lines.len().saturating_sub(max_lines);
        format!("; its stderr ended with: {}", lines[start..].join(" | "))
    }
}

/// Read `stderr` to its end into a tail, logging each line at debug level.
pub(crate) fn capture_stderr(
    server: &str,
    mut stderr: ChildStderr,
) -> (StderrTail, JoinHandle<()>) {
    let tail = StderrTail::default();
    let sink = tail.clone();
    let server = server.to_owned();
    let handle = tokio::spawn(async move {
        let mut line: Vec<u8> = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = match stderr.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            for &b in &chunk[..n] {
                if b == b'\n' {
                    tracing::debug!(server = %server, "mcp stderr: {}", String::from_utf8_lossy(&line));
                    sink.push(&line);
                    line.clear();
                } else if line.len() < LINE_CHARS * 4 {
                    line.push(b);
                }
            }
        }
        sink.push(&line);
    });
    (tail, handle)
}

/// Give the stderr reader a moment to collect the last words of a server that just died.
pub(crate) async fn drain(handle: JoinHandle<()>) {
    let _ = tokio::time::timeout(Duration::from_millis(300), handle).await;
}
