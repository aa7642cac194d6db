//! The Read tool: the contents of one text file, bounded, streamed from disk so a huge file
//! is refused after reading only as much as the limit, never loaded whole. What it may
//! open is the file tools' one view (`tools::view`): outside the workspace needs a rule,
//! process files and hidden credentials never, and the file is opened without following a
//! symlink on the way.

use std::io::{BufRead, BufReader};

use serde_json::Value;

use super::grant::Grant;
use super::view::{Access, check_use, locate};
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
use crate::nofollow;

super::catalogued!(pub struct Read => catalog::READ);

#[async_trait::async_trait]
impl Tool for Read {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "filepath")?.to_owned();
        let parallel = ctx.parallel_calls.max(1);
        ctx.blocking("read", move |shared, grant| {
            read_bounded(&raw, shared, grant, parallel)
        })
        .await
    }
}

/// Opens the file `raw` names through the one view: its folder without following a
/// symlink, the file itself not through one, and where it really is checked once open.
pub(crate) fn open_checked(
    shared: &ToolShared,
    grant: &Grant,
    raw: &str,
) -> Result<(std::fs::File, std::path::PathBuf), ToolError> {
    let at = locate(shared, grant, raw, Access::Read, false)?;
    let file = nofollow::open_file(&at.dir, &at.name, false).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::RespondToModel(format!("File does not exist: {raw}"))
        }
        _ => ToolError::RespondToModel(format!("Cannot open {raw}: {e}")),
    })?;
    let real = match nofollow::path_of(&file) {
        Ok(opened) if opened != at.real => {
            check_use(shared, grant, raw, &opened, Access::Read)?;
            opened
        }
        _ => at.real,
    };
    Ok((file, real))
}

fn read_bounded(
    raw: &str,
    shared: &ToolShared,
    grant: &Grant,
    parallel: usize,
) -> Result<ToolOutput, ToolError> {
    let (file, real) = open_checked(shared, grant, raw)?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
    if meta.is_dir() {
        return Err(ToolError::RespondToModel(format!(
            "{raw} is a directory; use List to see its entries"
        )));
    }
    // A named pipe, socket or device: opening or reading it can block for ever (a pipe
    // waits for a writer) or never end (/dev/zero).
    if !meta.is_file() {
        return Err(ToolError::RespondToModel(format!(
            "{raw} is not a regular file (a pipe, socket or device); Read only reads files"
        )));
    }
    let max_chars = shared.limits.read_max_chars / parallel;
    let max_lines = shared.limits.read_max_lines / parallel;
    // A character is at most four bytes: a longer file is over the limit whatever it holds,
    // and no line (a file without newlines is one) is read past the limit.
    let max_bytes = (max_chars as u64).saturating_mul(4);
    if meta.len() > max_bytes {
        return Err(too_large(raw, meta.len(), max_chars, max_lines, parallel));
    }
    let mut reader = BufReader::new(std::io::Read::take(file, max_bytes.saturating_add(1)));
    let mut content = String::new();
    let (mut chars, mut lines) = (0usize, 0usize);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
        if n == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        chars += text.chars().count();
        lines += 1;
        if chars > max_chars || lines > max_lines {
            return Err(too_large(raw, meta.len(), max_chars, max_lines, parallel));
        }
        content.push_str(&text);
    }
    shared.mark_read(real);
    Ok(ToolOutput::text(format!("Contents of {raw}:\n{content}")))
}

fn too_large(
    raw: &str,
    bytes: u64,
    max_chars: usize,
    max_lines: usize,
    parallel: usize,
) -> ToolError {
    let mut msg = format!(
        "File is too large to read at once: {raw} has {bytes} bytes; the limit is {max_chars} \
         characters or {max_lines} lines. Read a part with Bash (`sed -n '1,200p' {raw}`, \
         `head -c 20000 {raw}`) or look for lines with Search."
    );
    if parallel > 1 {
        msg.push_str(&format!(
            " (The limit is divided by the {parallel} parallel tool calls of this turn.)"
        ));
    }
    ToolError::RespondToModel(msg)
}
