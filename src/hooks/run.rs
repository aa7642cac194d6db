//! Runs one hook command as checks and Bash calls run: `bash -c` in the workspace, in
//! the run's sandbox, with the run's environment (the sandbox's allow-list applies), its
//! output bounded, killed at its timeout or when the run stops. The event's JSON reaches
//! the command's stdin through a here-document in the shell script itself, so nothing is
//! written outside the process and the contained launcher needs no new channel.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::output::Failure;
use crate::tools::{CommandLimits, run_command_sandboxed};

/// Output kept of a hook's stdout and stderr (each).
const MAX_CHARS: usize = 64_000;
const MAX_LINES: usize = 2_000;

/// Time past its timeout after which a hook that keeps writing is abandoned.
const OVERRUN: Duration = Duration::from_secs(2);

/// Where and how hooks run.
#[derive(Debug, Clone)]
pub struct Place {
    pub workspace: std::path::PathBuf,
    pub env: Vec<(String, String)>,
    /// The run's sandbox, set up when first needed (a hook's first run may wait for it).
    pub sandbox: crate::sandbox::Deferred,
    pub cancel: CancellationToken,
}

/// How one hook process went.
#[derive(Debug, Clone)]
pub struct Ran {
    pub exit_code: Option<i32>,
    pub failure: Option<Failure>,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: u64,
}

/// Runs `command` with `input` on its stdin, for at most `timeout`.
pub async fn run_hook(command: &str, input: &str, timeout: Duration, place: &Place) -> Ran {
    let started = Instant::now();
    let script = wrap(command, input, &place.workspace);
    let limits = CommandLimits {
        inactivity: timeout,
        max_chars: MAX_CHARS,
        max_lines: MAX_LINES,
    };
    let run = run_command_sandboxed(
        &script,
        &place.workspace,
        &place.env,
        limits,
        &place.cancel,
        place.sandbox.policy(),
    );
    // The inactivity limit kills a silent hook's whole process group; this bounds one
    // that keeps writing.
    let outcome = tokio::time::timeout(timeout + OVERRUN, run).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let mut ran = Ran {
        exit_code: None,
        failure: None,
        stdout: String::new(),
        stderr: String::new(),
        duration_ms,
    };
    match outcome {
        Err(_) => ran.failure = Some(Failure::Timeout(timeout.as_secs())),
        Ok(Err(e)) => ran.failure = Some(Failure::Spawn(e.to_string())),
        Ok(Ok(o)) => {
            ran.failure = if o.timed_out {
                Some(Failure::Timeout(timeout.as_secs()))
            } else if o.exit_code.is_none() {
                Some(Failure::Killed)
            } else {
                None
            };
            (ran.exit_code, ran.stdout, ran.stderr) = (o.exit_code, o.stdout, o.stderr);
        }
    }
    ran
}

/// The script run: stdin from a here-document holding `input` (one line of JSON, its
/// delimiter a random word), `CLAUDE_PROJECT_DIR` set as Claude Code sets it, then the
/// hook's own command.
fn wrap(command: &str, input: &str, workspace: &Path) -> String {
    let word = format!("CN_RUN_HOOK_INPUT_{}", uuid::Uuid::new_v4().simple());
    let dir = shell_words::quote(&workspace.to_string_lossy()).into_owned();
    format!("exec 0<<'{word}'\n{input}\n{word}\nexport CLAUDE_PROJECT_DIR={dir}\n{command}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(dir: &Path) -> Place {
        Place {
            workspace: dir.to_path_buf(),
            env: vec![("PATH".to_owned(), std::env::var("PATH").unwrap())],
            sandbox: crate::sandbox::Deferred::ready(
                crate::sandbox::SandboxPolicy::off(),
                crate::sandbox::Probe::off(),
            ),
            cancel: CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn the_event_reaches_stdin_and_the_project_dir_is_set() {
        let dir = tempfile::tempdir().unwrap();
        let p = place(dir.path());
        let input = r#"{"hook_event_name":"Stop","x":"it's $HOME `id`"}"#;
        let ran = run_hook(
            "cat; echo \"$CLAUDE_PROJECT_DIR\"",
            input,
            Duration::from_secs(10),
            &p,
        )
        .await;
        assert_eq!(ran.exit_code, Some(0), "{ran:?}");
        let mut lines = ran.stdout.lines();
        assert_eq!(lines.next(), Some(input), "stdin is the JSON, unexpanded");
        assert_eq!(lines.next(), Some(dir.path().to_str().unwrap()));
    }

    #[tokio::test]
    async fn a_hanging_hook_is_killed_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run_hook("sleep 30", "{}", Duration::from_secs(1), &place(dir.path())).await;
        assert_eq!(ran.failure, Some(Failure::Timeout(1)));
        assert_eq!(ran.exit_code, None);
    }
}
