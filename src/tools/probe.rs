//! The body of the test-only Probe tool (`catalog::probe`): it writes its stamp into the
//! file it names, as a Write would.

use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::catalog::probe::ProbeArgs;

super::catalogued!(pub(crate) struct Probe => crate::catalog::probe::INFO);

#[async_trait::async_trait]
impl Tool for Probe {
    /// Reads its arguments through the catalogue's argument struct.
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ProbeArgs =
            serde_json::from_value(args).map_err(|e| ToolError::RespondToModel(e.to_string()))?;
        let stamp = args.stamp.as_deref().unwrap_or("probed");
        let path = ctx.shared.workspace.join(&args.target);
        std::fs::write(&path, stamp).map_err(|e| ToolError::Fatal(e.to_string()))?;
        Ok(ToolOutput::text(format!("stamped {}", args.target)))
    }
}
