//! Checklist: the agent's own task list, reported with the result.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ClaudeName, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChecklistArgs {
    /// The whole checklist in markdown.
    pub checklist: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Write or replace your task checklist (markdown, `- [ ]` open, `- [x]` done). \
Keep it short; it is reported with the run's result.",
    // Claude's TodoWrite keeps the same list as structured `todos`, not markdown: the
    // name matches, no field does.
    claude: &[ClaudeName {
        name: "TodoWrite",
        fields: &[],
    }],
    ..ToolInfo::new(
        "Checklist",
        ToolClass::Reports,
        Changes::Nothing,
        schema::of::<ChecklistArgs>,
    )
};
