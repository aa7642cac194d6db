//! Exit: the agent stops the run (as failed, as in `cn`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitArgs {}

pub const INFO: ToolInfo = ToolInfo {
    description: "Stop the run now and mark it as failed. Use only when the task cannot be \
completed; prefer ReportFailure, which lets you say why.",
    ..ToolInfo::new(
        "Exit",
        ToolClass::Reports,
        Changes::Nothing,
        schema::of::<ExitArgs>,
    )
};
