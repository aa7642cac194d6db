//! Post-run checks: the job author's commands (lint, tests) run after the agent stops, in
//! the workspace, outside the agent's permission policy — the job author wrote them, the
//! model did not. They run contained like Bash (same sandbox, same environment): the tree
//! they run over is the model's, and a `git status` there runs what the model planted
//! (`core.fsmonitor`, hooks).

use std::path::Path;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

pub use crate::events::CheckResult;
use crate::job::Check;
use crate::sandbox::SandboxPolicy;
use crate::tools::{CommandLimits, run_command_sandboxed};

/// Characters of a check's output kept (the tail) for the agent, JUnit and result.json.
const TAIL_CHARS: usize = 8_000;
const TAIL_LINES: usize = 200;

/// Run `checks` in order (all of them, so a report shows every failure); `done` hears
/// each result as its check ends (a process killed in the middle leaves the ones before).
/// Once the run is stopped (a signal) no check starts: each left is reported interrupted.
pub async fn run_checks(
    checks: &[Check],
    attempt: u32,
    workspace: &Path,
    env: &[(String, String)],
    cancel: &CancellationToken,
    sandbox: &SandboxPolicy,
    done: &mut (dyn FnMut(&CheckResult) + Send),
) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(checks.len());
    for check in checks {
        let result = if cancel.is_cancelled() {
            CheckResult {
                name: check.name.clone(),
                attempt,
                passed: false,
                exit_code: None,
                duration_ms: 0,
                timed_out: false,
                output_tail: "not run: the run was stopped".to_owned(),
                interrupted: true,
            }
        } else {
            run_one(check, attempt, workspace, env, cancel, sandbox).await
        };
        done(&result);
        results.push(result);
    }
    results
}

/// One check, run to its end, its time limit or the run's stop.
async fn run_one(
    check: &Check,
    attempt: u32,
    workspace: &Path,
    env: &[(String, String)],
    cancel: &CancellationToken,
    sandbox: &SandboxPolicy,
) -> CheckResult {
    let started = Instant::now();
    let limits = CommandLimits {
        inactivity: check.timeout,
        max_chars: TAIL_CHARS,
        max_lines: TAIL_LINES,
    };
    let deadline = tokio::time::sleep(check.timeout);
    let run = run_command_sandboxed(&check.run, workspace, env, limits, cancel, sandbox);
    let outcome = tokio::select! {
        o = run => o.map_err(|e| format!("could not start: {e}")),
        _ = deadline => Err(format!("timed out after {} s", check.timeout.as_secs())),
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let o = match outcome {
        Ok(o) => o,
        Err(message) => {
            return CheckResult {
                name: check.name.clone(),
                attempt,
                passed: false,
                exit_code: None,
                duration_ms,
                timed_out: message.starts_with("timed out"),
                output_tail: message,
                interrupted: cancel.is_cancelled(),
            };
        }
    };
    let mut tail = o.stdout.clone();
    if !o.stderr.is_empty() {
        if !tail.is_empty() && !tail.ends_with('\n') {
            tail.push('\n');
        }
        tail.push_str(&o.stderr);
    }
    for refused in &o.network_refused {
        tail.push_str(&format!(
            "\n[network: the sandbox's proxy refused {refused}]"
        ));
    }
    let (tail, _) = crate::tools::truncate_tail(&tail, TAIL_CHARS, TAIL_LINES);
    CheckResult {
        name: check.name.clone(),
        attempt,
        passed: o.exit_code == Some(0) && !o.timed_out && !o.cancelled,
        exit_code: o.exit_code,
        duration_ms,
        timed_out: o.timed_out,
        output_tail: tail,
        interrupted: o.cancelled,
    }
}

/// The user message that sends failed checks back to the agent.
pub fn feedback(failed: &[&CheckResult], attempt: u32, max_attempts: u32) -> String {
    let mut text = format!(
        "The job's checks ran after you finished, and {} of them failed (attempt {attempt} of {max_attempts}). \
         Fix the cause, then finish again with a final answer.\n",
        failed.len()
    );
    for c in failed {
        let how = match (c.timed_out, c.exit_code) {
            (true, _) => "timed out".to_owned(),
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) => "killed".to_owned(),
        };
        text.push_str(&format!(
            "\n### {} ({how})\n```\n{}\n```\n",
            c.name,
            c.output_tail.trim_end()
        ));
    }
    text
}
