//! The MultiEdit tool: several find-and-replace edits to one file, applied in order, all or
//! nothing. If any edit fails, the file is left exactly as it was and the error names the
//! failing edit (`edits[i]: …`).

use serde_json::Value;

use super::edit::{edit_file, match_line_endings, respond, strategy_note};
use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog::{self, ToolInfo};
use crate::edit::{EditSpec, apply_edits, validate_multi_edit};

pub struct MultiEdit;

#[async_trait::async_trait]
impl Tool for MultiEdit {
    fn info(&self) -> Option<&'static ToolInfo> {
        Some(&catalog::MULTI_EDIT)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "file_path")?.to_owned();
        let edits = validate_multi_edit(&args).map_err(|e| respond(&e))?;
        ctx.blocking("multi-edit", move |shared, grant| {
            edit_file(shared, grant, &raw, |content| {
                let edits: Vec<EditSpec> = edits
                    .into_iter()
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
            })
        })
        .await
    }
}
