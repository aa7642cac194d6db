//! The Checklist tool: the agent's own task list, kept for the run and shown in result.json.

use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolOutput, object_schema, str_arg};
use crate::conversation::ToolSpec;

pub struct Checklist;

#[async_trait::async_trait]
impl Tool for Checklist {
    fn name(&self) -> &str {
        "Checklist"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Checklist".into(),
            description:
                "Write or replace your task checklist (markdown, `- [ ]` open, `- [x]` done). \
                          Keep it short; it is reported with the run's result."
                    .into(),
            parameters: object_schema(&[(
                "checklist",
                "string",
                "The whole checklist in markdown.",
                true,
            )]),
        }
    }

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
