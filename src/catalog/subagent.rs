//! Subagent: hand a task to a nested agent the job declares. The offered description
//! adds the list of agents to the one here.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ClaudeName, Offer, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SubagentArgs {
    /// Which agent to use.
    pub subagent_name: String,
    /// A few words on the task, for the logs.
    pub description: String,
    /// The complete task for the agent.
    pub prompt: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Hand a self-contained task to a specialised agent. It works with its own \
conversation (it does not see yours), within your permissions, and returns its final answer. \
Give it everything it needs in `prompt`. Available agents:\n",
    claude: &[ClaudeName {
        name: "Task",
        fields: &[
            ("subagent_name", "subagent_type"),
            ("description", "description"),
            ("prompt", "prompt"),
        ],
    }],
    offer: Offer::WhenDeclared,
    ..ToolInfo::new(
        "Subagent",
        ToolClass::Delegates,
        Changes::Anything,
        schema::of::<SubagentArgs>,
    )
};
