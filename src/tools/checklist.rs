//! The Checklist tool: the agent's own task list, kept for the run and shown in result.json.

use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;

super::catalogued!(pub struct Checklist => catalog::CHECKLIST);

#[async_trait::async_trait]
impl Tool for Checklist {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let list = str_arg(&args, "checklist")?;
        ctx.shared.set_checklist(list.to_owned());
        let open = list.matches("- [ ]").count();
        let done = list.matches("- [x]").count() + list.matches("- [X]").count();
        Ok(ToolOutput::text(format!(
            "Checklist saved ({done} done, {open} open):\n{list}"
        )))
    }
}
