//! CheckBackgroundJob: how a command Bash started in the background is doing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckBackgroundJobArgs {
    /// The job id Bash returned when it started the job, e.g. bg-1.
    pub job_id: String,
}

pub const INFO: ToolInfo = ToolInfo {
    name: "CheckBackgroundJob",
    description: "Show the status (running, completed, failed or killed), exit code and latest \
output of a background job started by Bash with run_in_background.",
    class: ToolClass::Runs,
    changes: Changes::Nothing,
    rule_arg: Some(RuleArg {
        name: "job_id",
        kind: ArgKind::Name,
        default: None,
    }),
    twin: None,
    background: None,
    claude: &[ClaudeName {
        name: "BashOutput",
        fields: &[("job_id", "bash_id")],
    }],
    offer: Offer::Always,
    schema: schema::of::<CheckBackgroundJobArgs>,
};
