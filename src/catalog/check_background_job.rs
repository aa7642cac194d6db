//! CheckBackgroundJob: how a command Bash started in the background is doing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckBackgroundJobArgs {
    /// The job id Bash returned when it started the job, e.g. bg-1.
    pub job_id: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Show the status (running, completed, failed or killed), exit code and latest \
output of a background job started by Bash with run_in_background.",
    rule_arg: Some(RuleArg::named("job_id", ArgKind::Name)),
    claude: &[ClaudeName {
        name: "BashOutput",
        fields: &[("job_id", "bash_id")],
    }],
    ..ToolInfo::new(
        "CheckBackgroundJob",
        ToolClass::Runs,
        Changes::Nothing,
        schema::of::<CheckBackgroundJobArgs>,
    )
};
