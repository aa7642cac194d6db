//! The ReportFailure tool: the agent says it cannot do the task, and why. The run ends as
//! failed (exit 1) with the reason in result.json, rather than ending with a vague answer.

use serde_json::Value;

use super::{Control, Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;

super::catalogued!(pub struct ReportFailure => catalog::REPORT_FAILURE);

#[async_trait::async_trait]
impl Tool for ReportFailure {
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
