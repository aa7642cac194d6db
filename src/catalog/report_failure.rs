//! ReportFailure: the agent gives up and says why.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportFailureArgs {
    /// Why the task cannot be completed.
    #[serde(rename = "errorMessage")]
    pub error_message: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Give up on the task and end the run as failed, explaining why (what blocked \
you, what you tried). Use this instead of finishing when the task cannot be done; the \
explanation is shown to whoever reads the run's result.",
    ..ToolInfo::new(
        "ReportFailure",
        ToolClass::Reports,
        Changes::Nothing,
        schema::of::<ReportFailureArgs>,
    )
};
