//! Checklist: the agent's own task list, reported with the result.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ClaudeName, Offer, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChecklistArgs {
    /// The whole checklist in markdown.
    pub checklist: String,
}

pub const INFO: ToolInfo = ToolInfo {
    name: "Checklist",
    description: "Write or replace your task checklist (markdown, `- [ ]` open, `- [x]` done). \
Keep it short; it is reported with the run's result.",
    class: ToolClass::Reports,
    changes: Changes::Nothing,
    rule_arg: None,
    twin: None,
    background: None,
    // Claude's TodoWrite keeps the same list as structured `todos`, not markdown: the
    // name matches, no field does.
    claude: &[ClaudeName {
        name: "TodoWrite",
        fields: &[],
    }],
    offer: Offer::Always,
    schema: schema::of::<ChecklistArgs>,
};
