//! ReportFailure: the agent gives up and says why.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, Offer, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportFailureArgs {
    /// Why the task cannot be completed.
    #[serde(rename = "errorMessage")]
    pub error_message: String,
}

pub const INFO: ToolInfo = ToolInfo {
    name: "ReportFailure",
    description: "Give up on the task and end the run as failed, explaining why (what blocked \
you, what you tried). Use this instead of finishing when the task cannot be done; the \
explanation is shown to whoever reads the run's result.",
    class: ToolClass::Reports,
    changes: Changes::Nothing,
    rule_arg: None,
    twin: None,
    background: None,
    claude: &[],
    offer: Offer::Always,
    schema: schema::of::<ReportFailureArgs>,
};
