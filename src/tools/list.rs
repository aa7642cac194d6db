//! The List tool: the entries of one directory, sorted, with kinds and sizes. The folder
//! is the file tools' one view (`tools::view`): outside the workspace needs a rule, and it
//! is opened without following a symlink on the way.

use serde_json::Value;

use super::view::{Access, locate};
use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;
use crate::nofollow;

super::catalogued!(pub struct List => catalog::LIST);

/// More entries than this are cut, with a note (a `node_modules` listing helps nobody).
const MAX_ENTRIES: usize = 1_000;

#[async_trait::async_trait]
impl Tool for List {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "dirpath")?.to_owned();
        ctx.blocking("list", move |shared, grant| {
            let at = locate(shared, grant, &raw, Access::Read, false)?;
            let dir =
                nofollow::open_listable(&at.dir, &at.name).map_err(|e| match e.raw_os_error() {
                    Some(2) => {
                        ToolError::RespondToModel(format!("Directory does not exist: {raw}"))
                    }
                    Some(20) => ToolError::RespondToModel(format!("Not a directory: {raw}")),
                    _ => ToolError::RespondToModel(format!("Cannot list {raw}: {e}")),
                })?;
            list(&raw, &dir)
        })
        .await
    }
}

/// The sorted entries of the open folder `dir`, as the model sees them.
fn list(raw: &str, dir: &std::os::fd::OwnedFd) -> Result<ToolOutput, ToolError> {
    let mut entries: Vec<(String, String)> = nofollow::entries(dir)
        .map_err(|e| ToolError::RespondToModel(format!("Cannot list {raw}: {e}")))?
        .into_iter()
        .map(|(name, _)| {
            let kind = match nofollow::kind_of(dir, &name) {
                Ok(Some((rustix::fs::FileType::Directory, _))) => "directory".to_owned(),
                Ok(Some((rustix::fs::FileType::Symlink, _))) => "symlink".to_owned(),
                Ok(Some((_, len))) => format!("file, {len} bytes"),
                _ => "unreadable".to_owned(),
            };
            (name.to_string_lossy().into_owned(), kind)
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
