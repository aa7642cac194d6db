//! The ReportFailure tool: the agent says it cannot do the task, and why. The run ends as
//! failed (exit 1) with the reason in result.json, rather than ending with a vague answer.

use serde_json::Value;

use super::{Control, Tool, ToolContext, ToolError, ToolOutput, object_schema, str_arg};
use crate::conversation::ToolSpec;

pub struct ReportFailure;

const DESCRIPTION: &str = "Give up on the task and end the run as failed, explaining why \
(what blocked you, what you tried). Use this instead of finishing when the task cannot be \
done; the explanation is shown to whoever reads the run's result.";

#[async_trait::async_trait]
impl Tool for ReportFailure {
    fn name(&self) -> &str {
        "ReportFailure"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "ReportFailure".into(),
            description: DESCRIPTION.into(),
            parameters: object_schema(&[(
                "errorMessage",
                "string",
                "Why the task cannot be completed.",
                true,
            )]),
        }
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let reason = str_arg(&args, "errorMessage")?.trim();
        if reason.is_empty() {
            return Err(ToolError::RespondToModel(
                "errorMessage is empty; say why the task cannot be completed.".into(),
            ));
        }
        Ok(ToolOutput {
            content: "Failure reported; the run ends as failed.".into(),
            control: Some(Control::ReportFailure(reason.to_owned())),
            images: Vec::new(),
        })
    }
}
