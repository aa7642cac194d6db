//! The MultiEdit tool: several find-and-replace edits to one file, applied in order, all or
//! nothing. If any edit fails, the file is left exactly as it was and the error names the
//! failing edit (`edits[i]: …`).

use serde_json::{Value, json};

use super::edit::{edit_file, judge_file_path, match_line_endings, respond, strategy_note};
use super::grant::Judged;
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::conversation::ToolSpec;
use crate::edit::{EditSpec, apply_edits, validate_multi_edit};
use crate::permissions::Tighten;

pub struct MultiEdit;

const DESCRIPTION: &str = "Make several changes to one existing file in a single call. Each \
edit finds `old_string` and puts `new_string` in its place; edits run in order, each on the \
result of the previous one, and if any edit fails nothing is written. Read the file first. \
Each `old_string` must match one place unless its `replace_all` is true; matching falls back \
to ignoring surrounding whitespace, case, and then all whitespace, and the result says which \
was used. Only the first edit may have an empty `old_string` (it inserts at the top).";

#[async_trait::async_trait]
impl Tool for MultiEdit {
    fn name(&self) -> &str {
        "MultiEdit"
    }

    fn is_mutating(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        let edit = json!({
            "type": "object",
            "required": ["old_string", "new_string"],
            "properties": {
                "old_string": {"type": "string", "description": "The text to replace, copied from the file."},
                "new_string": {"type": "string", "description": "The text to put in its place; must differ from old_string."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one (default false)."}
            }
        });
        ToolSpec {
            name: "MultiEdit".into(),
            description: DESCRIPTION.into(),
            parameters: json!({
                "type": "object",
                "required": ["file_path", "edits"],
                "properties": {
                    "file_path": {"type": "string", "description": "Path of the file to change (relative to the workspace, or absolute)."},
                    "edits": {"type": "array", "description": "The edits, applied one after another.", "items": edit}
                }
            }),
        }
    }

    fn tighten(&self, args: &Value, shared: &ToolShared) -> Option<Tighten> {
        self.judge(args, shared).tighten
    }

    fn judge(&self, args: &Value, shared: &ToolShared) -> Judged {
        judge_file_path(args, shared)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "file_path")?.to_owned();
        let edits = validate_multi_edit(&args).map_err(|e| respond(&e))?;
        let (shared, grant) = (ctx.shared.clone(), ctx.grant.clone());
        tokio::task::spawn_blocking(move || {
            edit_file(&shared, &grant, &raw, |content| {
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
        .map_err(|e| ToolError::Fatal(format!("multi-edit task failed: {e}")))?
    }
}
