//! The Edit tool: replace one piece of text in a file the model has read, and the checks
//! and write path it shares with MultiEdit.
//!
//! The model must have Read the file (its real path, symlinks followed) earlier in the run,
//! so it edits what is on disk rather than what it remembers. The search is the edit
//! engine's graded match; the result names the strategy that matched and shows a unified
//! diff. The write is atomic and keeps the file's mode.

use std::borrow::Cow;
use std::sync::{LazyLock, Mutex, PoisonError};

use serde_json::Value;

use super::grant::Grant;
use super::view::{Access, locate, shown};
use super::write::write_atomic_in;
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
use crate::edit::{
    EditError, EditSpec, Strategy, find_and_replace, unified_diff, validate_single_edit,
};
use crate::nofollow;

super::catalogued!(pub struct Edit => catalog::EDIT);

/// Edits of one file must not interleave (parallel calls in a turn): one at a time.
static EDIT_LOCK: LazyLock<Mutex<()>> = LazyLock::new(|| Mutex::new(()));

#[async_trait::async_trait]
impl Tool for Edit {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_edits(ctx, &args, "edit", validate_single_edit, replace_one).await
    }
}

/// Edit's change to the file's text: one replacement (or every one, with `replace_all`).
fn replace_one(content: &str, spec: &EditSpec) -> Edited {
    let (old, new) = (
        match_line_endings(content, &spec.old_string),
        match_line_endings(content, &spec.new_string),
    );
    let done = find_and_replace(content, &old, &new, spec.replace_all, 0)
        .map_err(|e| respond_single(&e))?;
    let times = match done.replacements {
        1 => "1 replacement".to_owned(),
        n => format!("{n} replacements"),
    };
    Ok((
        done.content,
        format!("{times}, {}", strategy_note(&[done.strategy])),
    ))
}

/// The new text of a file and a summary of the change, or why the edit cannot be made.
pub(crate) type Edited = Result<(String, String), ToolError>;

/// The run of Edit and MultiEdit: the file the call names and the edits `validate` reads
/// from the arguments, then `apply` on the file's text on the blocking pool
/// ([`edit_file`]: nothing is written unless `apply` succeeds).
pub(crate) async fn run_edits<E: Send + 'static>(
    ctx: &ToolContext,
    args: &Value,
    what: &'static str,
    validate: fn(&Value) -> Result<E, EditError>,
    apply: fn(&str, &E) -> Edited,
) -> Result<ToolOutput, ToolError> {
    let raw = str_arg(args, "file_path")?.to_owned();
    let edits = validate(args).map_err(|e| respond(&e))?;
    ctx.blocking(what, move |shared, grant| {
        edit_file(shared, grant, &raw, |content| apply(content, &edits))
    })
    .await
}

/// The engine's error as a tool result.
pub(crate) fn respond(err: &EditError) -> ToolError {
    ToolError::RespondToModel(err.message.clone())
}

/// For the single-edit tool, the batch prefix `edits[0]: ` means nothing to the model.
fn respond_single(err: &EditError) -> ToolError {
    let msg = err
        .message
        .strip_prefix("edits[0]: ")
        .unwrap_or(&err.message);
    ToolError::RespondToModel(msg.to_owned())
}

/// Which strategies matched, in words; loose matches get a warning to check the diff.
pub(crate) fn strategy_note(strategies: &[Strategy]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in strategies {
        if !names.contains(&s.name()) {
            names.push(s.name());
        }
    }
    let mut note = format!("matched by {}", names.join(", "));
    let loose = strategies
        .iter()
        .any(|s| !matches!(s, Strategy::ExactMatch | Strategy::EmptySearch));
    if loose {
        note.push_str(" (old_string was not found verbatim; check the diff)");
    }
    note
}

/// `text` with CRLF line ends when the file uses them and `text` has none, so an edit
/// to a Windows-style file neither misses nor leaves mixed line endings.
pub(crate) fn match_line_endings<'a>(content: &str, text: &'a str) -> Cow<'a, str> {
    if content.contains("\r\n") && text.contains('\n') && !text.contains('\r') {
        Cow::Owned(text.replace('\n', "\r\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The checks and write path of Edit and MultiEdit: the file exists, was read, is UTF-8
/// text; `apply` turns its content into `(new content, summary)`; nothing is written
/// unless `apply` succeeds. The file is read and replaced in the folder opened for the
/// check, never through a symlink.
pub(crate) fn edit_file(
    shared: &ToolShared,
    grant: &Grant,
    raw: &str,
    apply: impl FnOnce(&str) -> Edited,
) -> Result<ToolOutput, ToolError> {
    let at = locate(shared, grant, raw, Access::Write, false)?;
    let missing = || {
        ToolError::RespondToModel(format!(
            "File does not exist: {raw}. This tool changes existing files; create new ones with Write."
        ))
    };
    match nofollow::kind_of(&at.dir, &at.name) {
        Ok(Some((rustix::fs::FileType::Directory, _))) => {
            return Err(ToolError::RespondToModel(format!(
                "{raw} is a directory, not a file"
            )));
        }
        Ok(Some(_)) => {}
        _ => return Err(missing()),
    }
    if !shared.was_read(&at.real) {
        return Err(ToolError::RespondToModel(format!(
            "You must Read {raw} before editing it, so the edit is based on its current content."
        )));
    }
    let _guard = EDIT_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let mut file = nofollow::open_file(&at.dir, &at.name, false)
        .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|e| ToolError::RespondToModel(format!("Cannot read {raw}: {e}")))?;
    let old = String::from_utf8(bytes).map_err(|_| {
        ToolError::RespondToModel(format!(
            "{raw} is not UTF-8 text, so it cannot be edited with this tool; use Bash instead."
        ))
    })?;
    let (new, summary) = apply(&old)?;
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    write_atomic_in(&at.dir, &at.name, new.as_bytes(), Some(mode))
        .map_err(|e| ToolError::RespondToModel(format!("Cannot write {raw}: {e}")))?;
    let shown = shown(shared, &at.real);
    let diff = unified_diff(&shown, &old, &new);
    Ok(ToolOutput::text(format!(
        "Edited {shown} ({summary})\n{diff}"
    )))
}
