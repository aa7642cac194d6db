//! The Bash tool: run a shell command in the workspace and give the model the tail of its
//! output and its exit code. Safety is decided before this runs (permissions + the command
//! safety evaluator); this file is only about running it well.

use std::time::Duration;

use serde_json::Value;

use super::output::cut_note;
use super::process::{CommandLimits, CommandOutcome, run_command_sandboxed};
use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;

super::catalogued!(pub struct Bash => catalog::BASH);

#[async_trait::async_trait]
impl Tool for Bash {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = str_arg(&args, "command")?;
        if args.get("run_in_background").and_then(Value::as_bool) == Some(true) {
            return start_background(command, ctx);
        }
        let limits = &ctx.shared.limits;
        let inactivity = match args.get("timeout").and_then(Value::as_f64) {
            Some(secs) if secs > 0.0 => Duration::from_secs_f64(secs).min(limits.bash_max_timeout),
            _ => limits.bash_default_timeout,
        };
        let parallel = ctx.parallel_calls.max(1);
        let bounds = CommandLimits {
            inactivity,
            max_chars: limits.bash_max_chars / parallel,
            max_lines: limits.bash_max_lines / parallel,
        };
        let outcome = run_command_sandboxed(
            command,
            &ctx.shared.workspace,
            &ctx.shared.env,
            bounds,
            &ctx.shared.cancel,
            ctx.shared.sandbox(),
        )
        .await
        .map_err(|e| spawn_error(command, &e))?;
        let text = format_outcome(&outcome, inactivity, parallel, limits.bash_max_chars);
        if outcome.exit_code == Some(0) {
            Ok(ToolOutput::text(text))
        } else {
            Err(ToolError::RespondToModel(text))
        }
    }
}

/// Why bash could not start. A command longer than the kernel allows for one argument
/// (128 KiB on Linux) is the model's to fix; anything else means the environment is broken.
pub(crate) fn spawn_error(command: &str, err: &std::io::Error) -> ToolError {
    if err.kind() == std::io::ErrorKind::ArgumentListTooLong {
        return ToolError::RespondToModel(format!(
            "The command was not run: at {} bytes it is too long for the system to start \
             (one argument may have at most 128 KiB). Write the long part to a file with the \
             Write tool and run that file instead.",
            command.len()
        ));
    }
    ToolError::Fatal(format!("could not start bash: {err}"))
}

/// Start `command` as a background job and say how to follow it.
fn start_background(command: &str, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let shared = &ctx.shared;
    let jobs = shared.background();
    let (id, pid) = jobs.start(
        command,
        &shared.workspace,
        &shared.env,
        &shared.cancel,
        shared.sandbox(),
    )?;
    let pid = pid.map_or_else(String::new, |p| format!(", pid {p}"));
    Ok(ToolOutput::text(format!(
        "Started background job {id}{pid}. It keeps running while you work; see its status and \
         latest output with CheckBackgroundJob {{\"job_id\": \"{id}\"}}. It is stopped when the run ends."
    )))
}

/// The tool result: stdout, stderr, what was cut, and how the command ended.
fn format_outcome(
    o: &CommandOutcome,
    inactivity: Duration,
    parallel: usize,
    single: usize,
) -> String {
    let mut text = cut_note(o.stdout_cut);
    text.push_str(&o.stdout);
    if !o.stderr.is_empty() || o.stderr_cut.lines + o.stderr_cut.chars > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&cut_note(o.stderr_cut));
        text.push_str(&o.stderr);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if o.timed_out {
        text.push_str(&format!(
            "[command stopped: no output for {} s]\n",
            inactivity.as_secs()
        ));
    } else if o.cancelled {
        text.push_str("[command stopped: the run is ending]\n");
    } else {
        match o.exit_code {
            Some(0) => {
                if text.is_empty() {
                    text.push_str("(no output)\n");
                }
            }
            Some(code) => text.push_str(&format!("[exit code: {code}]\n")),
            None => text.push_str("[command killed by a signal]\n"),
        }
    }
    if o.leftovers_killed {
        text.push_str(
            "[the command left processes running in the background; they were stopped when it \
             ended. For a server or a long job, use run_in_background]\n",
        );
    }
    for refused in &o.network_refused {
        text.push_str(&format!(
            "[network: the sandbox's proxy refused {refused}]\n"
        ));
    }
    let cut = o.stdout_cut.lines + o.stdout_cut.chars + o.stderr_cut.lines + o.stderr_cut.chars;
    if parallel > 1 && cut > 0 {
        text.push_str(&format!(
            "[output limit divided by {parallel} parallel tool calls; a single call may show {single} characters]\n"
        ));
    }
    text
}
