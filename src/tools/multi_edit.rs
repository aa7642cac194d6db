//! The MultiEdit tool: several find-and-replace edits to one file, applied in order, all or
//! nothing. If any edit fails, the file is left exactly as it was and the error names the
//! failing edit (`edits[i]: …`).

use serde_json::Value;

use super::edit::{Edited, match_line_endings, run_edits, strategy_note};
use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::catalog;
use crate::edit::{EditSpec, apply_edits, validate_multi_edit};

super::catalogued!(pub struct MultiEdit => catalog::MULTI_EDIT);

#[async_trait::async_trait]
impl Tool for MultiEdit {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let apply: fn(&str, &Vec<EditSpec>) -> Edited = |text, edits| apply_all(text, edits);
        run_edits(ctx, &args, "multi-edit", validate_multi_edit, apply).await
    }
}

/// MultiEdit's change to the file's text: every edit in order, or none.
fn apply_all(content: &str, edits: &[EditSpec]) -> Edited {
    let edits: Vec<EditSpec> = edits
        .iter()
        .map(|e| EditSpec {
            old_string: match_line_endings(content, &e.old_string).into_owned(),
            new_string: match_line_endings(content, &e.new_string).into_owned(),
            replace_all: e.replace_all,
        })
        .collect();
    let (new, strategies) = apply_edits(content, &edits).map_err(|e| {
        ToolError::RespondToModel(format!(
            "{}\nNo edit was applied; the file is unchanged.",
            e.message
        ))
    })?;
    let count = match edits.len() {
        1 => "1 edit".to_owned(),
        n => format!("{n} edits"),
    };
    Ok((new, format!("{count}, {}", strategy_note(&strategies))))
}
