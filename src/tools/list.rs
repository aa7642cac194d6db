//! The List tool: the entries of one directory, sorted, with kinds and sizes.

use serde_json::Value;

use super::paths::resolve_in_workspace;
use super::{Tool, ToolContext, ToolError, ToolOutput, object_schema, str_arg};
use crate::conversation::ToolSpec;

pub struct List;

/// More entries than this are cut, with a note (a `node_modules` listing helps nobody).
const MAX_ENTRIES: usize = 1_000;

#[async_trait::async_trait]
impl Tool for List {
    fn name(&self) -> &str {
        "List"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "List".into(),
            description: "List the entries of a directory (not recursive), with sizes.".into(),
            parameters: object_schema(&[(
                "dirpath",
                "string",
                "Path of the directory to list.",
                true,
            )]),
        }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "dirpath")?;
        let path = resolve_in_workspace(&ctx.shared.workspace, raw);
        let meta = std::fs::metadata(&path.real)
            .map_err(|_| ToolError::RespondToModel(format!("Directory does not exist: {raw}")))?;
        if !meta.is_dir() {
            return Err(ToolError::RespondToModel(format!("Not a directory: {raw}")));
        }
        let mut entries: Vec<(String, String)> = std::fs::read_dir(&path.real)
            .map_err(|e| ToolError::RespondToModel(format!("Cannot list {raw}: {e}")))?
            .filter_map(Result::ok)
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let kind = match e.metadata() {
                    Ok(m) if m.is_dir() => "directory".to_owned(),
                    Ok(m) => format!("file, {} bytes", m.len()),
                    Err(_) => "unreadable".to_owned(),
                };
                (name, kind)
            })
            .collect();
        entries.sort();
        let total = entries.len();
        let mut text = format!("Entries of {raw} ({total}):\n");
        for (name, kind) in entries.iter().take(MAX_ENTRIES) {
            text.push_str(&format!("{name} ({kind})\n"));
        }
        if total > MAX_ENTRIES {
            text.push_str(&format!(
                "[{} more entries not shown]\n",
                total - MAX_ENTRIES
            ));
        }
        Ok(ToolOutput::text(text))
    }
}
