//! The CheckBackgroundJob tool: the status and recent output of a command Bash started with
//! `run_in_background`, as JSON.

use serde_json::{Value, json};

use super::output::truncate_tail;
use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;

super::catalogued!(pub struct CheckBackgroundJob => catalog::CHECK_BACKGROUND_JOB);

#[async_trait::async_trait]
impl Tool for CheckBackgroundJob {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let id = str_arg(&args, "job_id")?.trim();
        let jobs = ctx.shared.background();
        let Some(mut snap) = jobs.snapshot(id) else {
            let available: Vec<Value> = jobs
                .list()
                .iter()
                .map(|j| {
                    let command: String = j.command.chars().take(50).collect();
                    json!({"id": j.job_id, "status": j.status, "command": command})
                })
                .collect();
            let body = json!({"error": format!("Job {id} not found"), "available_jobs": available});
            return Err(ToolError::RespondToModel(pretty(&body)));
        };
        let parallel = ctx.parallel_calls.max(1);
        let limits = &ctx.shared.limits;
        let (tail, cut) = truncate_tail(
            &snap.output,
            limits.bash_max_chars / parallel,
            limits.bash_max_lines / parallel,
        );
        let dropped = snap.dropped_lines + cut.lines;
        snap.output = match (dropped, cut.chars) {
            (0, 0) => tail,
            (0, chars) => format!("[{chars} earlier characters not shown]\n{tail}"),
            (lines, _) => format!("[{lines} earlier lines not shown]\n{tail}"),
        };
        let body = serde_json::to_value(&snap)
            .map_err(|e| ToolError::Fatal(format!("cannot serialise a job: {e}")))?;
        Ok(ToolOutput::text(pretty(&body)))
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
