//! Exit: the agent stops the run (as failed, as in `cn`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, Offer, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitArgs {}

pub const INFO: ToolInfo = ToolInfo {
    name: "Exit",
    description: "Stop the run now and mark it as failed. Use only when the task cannot be \
completed; prefer ReportFailure, which lets you say why.",
    class: ToolClass::Reports,
    changes: Changes::Nothing,
    rule_arg: None,
    twin: None,
    background: None,
    claude: &[],
    offer: Offer::Always,
    schema: schema::of::<ExitArgs>,
};
