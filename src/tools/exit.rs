//! The Exit tool: the agent gives up. As in `cn`, the run ends as failed (exit 1).

use serde_json::Value;

use super::{Control, Tool, ToolContext, ToolError, ToolOutput};
use crate::conversation::ToolSpec;

pub struct Exit;

#[async_trait::async_trait]
impl Tool for Exit {
    fn name(&self) -> &str {
        "Exit"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Exit".into(),
            description: "Stop the run now and mark it as failed. Use only when the task cannot \
                          be completed; prefer ReportFailure, which lets you say why."
                .into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        }
    }

    async fn run(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            content: "Run stopped.".into(),
            control: Some(Control::Exit),
            images: Vec::new(),
        })
    }
}
