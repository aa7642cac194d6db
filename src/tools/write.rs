//! The Write tool: create or overwrite a file, atomically (temp file + rename in the same
//! folder, the old file's permissions kept), inside the workspace unless a rule names the
//! path. The folder is opened without following a symlink (`tools::view`), so a folder
//! swapped for a symlink after the check fails the write instead of redirecting it.

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::fd::OwnedFd;

use serde_json::Value;

use super::view::{Access, judge_arg, locate};
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
use crate::edit::unified_diff;
use crate::nofollow;
use crate::permissions::Tighten;

super::catalogued!(pub struct Write => catalog::WRITE);

#[async_trait::async_trait]
impl Tool for Write {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "filepath")?.to_owned();
        let content = str_arg(&args, "content")?.to_owned();
        ctx.blocking("write", move |shared, grant| {
            let at = locate(shared, grant, &raw, Access::Write, true)?;
            let old = read_existing(&at.dir, &at.name)
                .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
            let mode = old.as_ref().map(|(_, mode)| *mode);
            write_atomic_in(&at.dir, &at.name, content.as_bytes(), mode)
                .map_err(|e| ToolError::RespondToModel(format!("Cannot write {raw}: {e}")))?;
            Ok(match old {
                None => {
                    shared.mark_read(at.real);
                    ToolOutput::text(format!("Created {raw} ({} bytes)", content.len()))
                }
                Some((old, _)) if old == content => {
                    ToolOutput::text(format!("{raw} unchanged (same content)"))
                }
                Some((old, _)) => ToolOutput::text(format!(
                    "Wrote {raw}\n{}",
                    unified_diff(&raw, &old, &content)
                )),
            })
        })
        .await
    }
}

/// The tightening every writing tool applies (the MCP tools' path arguments too): outside
/// the workspace, inside `.git` or a credential file needs permission; process files,
/// hidden credentials and the run's records are refused.
pub(crate) fn path_tighten(raw: &str, shared: &ToolShared) -> Option<Tighten> {
    judge_arg(shared, raw, Access::Write).tighten
}

/// The text and mode of the file `name` in `dir`, `None` when it does not exist. A
/// folder, a symlink (a swap since the check) or a pipe there is an error.
pub(crate) fn read_existing(dir: &OwnedFd, name: &OsStr) -> std::io::Result<Option<(String, u32)>> {
    let Some(_) = nofollow::kind_of(dir, name)? else {
        return Ok(None);
    };
    let mut file = nofollow::open_file(dir, name, false)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    Ok(Some((String::from_utf8_lossy(&bytes).into_owned(), mode)))
}

pub(crate) use crate::nofollow::replace_file as write_atomic_in;
