//! The Exit tool: the agent gives up. As in `cn`, the run ends as failed (exit 1).

use serde_json::Value;

use super::{Control, Tool, ToolContext, ToolError, ToolOutput};
use crate::catalog;

super::catalogued!(pub struct Exit => catalog::EXIT);

#[async_trait::async_trait]
impl Tool for Exit {
    async fn run(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            content: "Run stopped.".into(),
            control: Some(Control::Exit),
            images: Vec::new(),
        })
    }
}
