//! The Write tool: create or overwrite a file, atomically (temp file + rename, the old
//! file's permissions kept), inside the workspace unless a rule names the path.

use std::io::Write as _;
use std::path::Path;

use serde_json::Value;

use super::paths::{is_sensitive_path, resolve_in_workspace};
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, object_schema, str_arg};
use crate::conversation::ToolSpec;
use crate::edit::unified_diff;
use crate::permissions::{Permission, Tighten};

pub struct Write;

const DESCRIPTION: &str = "Create a file or replace its whole content. `filepath` is relative \
to the workspace. Parent directories are created. For changes to part of an existing file, \
use the edit tool instead.";

#[async_trait::async_trait]
impl Tool for Write {
    fn name(&self) -> &str {
        "Write"
    }

    fn is_mutating(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Write".into(),
            description: DESCRIPTION.into(),
            parameters: object_schema(&[
                ("filepath", "string", "Path of the file to write.", true),
                (
                    "content",
                    "string",
                    "The complete new content of the file.",
                    true,
                ),
            ]),
        }
    }

    fn tighten(&self, args: &Value, shared: &ToolShared) -> Option<Tighten> {
        let raw = args.get("filepath")?.as_str()?;
        path_tighten(raw, shared)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "filepath")?.to_owned();
        let content = str_arg(&args, "content")?.to_owned();
        let shared = ctx.shared.clone();
        tokio::task::spawn_blocking(move || {
            let path = resolve_in_workspace(&shared.workspace, &raw);
            let old = match std::fs::read(&path.real) {
                Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(ToolError::RespondToModel(format!("Cannot read {raw}: {e}"))),
            };
            write_atomic(&path.real, content.as_bytes())
                .map_err(|e| ToolError::RespondToModel(format!("Cannot write {raw}: {e}")))?;
            Ok(match old {
                None => {
                    shared.mark_read(path.real);
                    ToolOutput::text(format!("Created {raw} ({} bytes)", content.len()))
                }
                Some(old) if old == content => {
                    ToolOutput::text(format!("{raw} unchanged (same content)"))
                }
                Some(old) => ToolOutput::text(format!(
                    "Wrote {raw}\n{}",
                    unified_diff(&raw, &old, &content)
                )),
            })
        })
        .await
        .map_err(|e| ToolError::Fatal(format!("write task failed: {e}")))?
    }
}

/// The tightening every writing tool applies: outside the workspace, or a credential file,
/// needs permission (an explicit rule naming the path allows it).
pub(crate) fn path_tighten(raw: &str, shared: &ToolShared) -> Option<Tighten> {
    let path = resolve_in_workspace(&shared.workspace, raw);
    if !path.inside {
        return Some(Tighten {
            permission: Permission::Ask,
            rule: "tool.outside_workspace",
            reason: format!(
                "{raw} resolves to {} outside the workspace",
                path.real.display()
            ),
        });
    }
    let git = path
        .real
        .strip_prefix(&shared.workspace)
        .is_ok_and(|rest| rest.components().any(|c| c.as_os_str() == ".git"));
    if git {
        return Some(Tighten {
            permission: Permission::Ask,
            rule: crate::permissions::GIT_INTERNALS_RULE,
            reason: format!(
                "{raw} lies inside .git, whose config and hooks run programs; only a rule that \
                 names .git allows it"
            ),
        });
    }
    is_sensitive_path(&path.real).then(|| Tighten {
        permission: Permission::Ask,
        rule: "tool.sensitive_file",
        reason: format!("{raw} looks like a credential file"),
    })
}

/// Write `bytes` to `path` through a temp file in the same directory and a rename, so a
/// reader never sees half a file; an existing file keeps its permissions.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".cn-run-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
