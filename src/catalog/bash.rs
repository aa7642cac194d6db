//! Bash: one shell command, in the foreground or in the background.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command to run.
    pub command: String,
    /// Seconds without output before the command is stopped (default 180, max 600).
    pub timeout: Option<f64>,
    /// Start the command and return at once with a job id instead of waiting for it.
    pub run_in_background: Option<bool>,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Run a shell command with `bash -c` in the workspace directory and return its \
output (the last lines if it is long) and exit code. Stdin is closed; a command that prints \
nothing for the timeout (default 180 s, at most 600 s) is stopped. Prefer the Read, Search and \
Edit tools for reading, searching and changing files. With `run_in_background` the command starts \
and the call returns at once with a job id (for servers and long builds; at most 5 at a time, all \
stopped when the run ends); follow it with CheckBackgroundJob.",
    rule_arg: Some(RuleArg::named("command", ArgKind::Command)),
    background: Some("run_in_background"),
    // Claude's `timeout` is in milliseconds, ours in seconds: same field, other unit.
    claude: &[ClaudeName {
        name: "Bash",
        fields: &[
            ("command", "command"),
            ("timeout", "timeout"),
            ("run_in_background", "run_in_background"),
        ],
    }],
    ..ToolInfo::new(
        "Bash",
        ToolClass::Runs,
        Changes::Anything,
        schema::of::<BashArgs>,
    )
};
