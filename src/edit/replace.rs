//! Find-and-replace on file content: one edit ([`find_and_replace`]) or a batch applied
//! in order, all or nothing ([`apply_edits`]).
//!
//! When a loose strategy located the old text, the model's indentation may not be the
//! file's, so the new text is re-indented the way Continue does it:
//! * `matched` is the leading whitespace of the file line where the match starts;
//!   `old` is the leading whitespace of the first non-blank line of `old_string`.
//!   If they are equal nothing changes.
//! * Blank lines of `new_string` stay as they are.
//! * The first line loses an `old` prefix (the file already supplies the indentation in
//!   front of the match).
//! * Every later line that starts with `old` gets `matched` instead of it (when `old` is
//!   empty that means `matched` is prepended); other lines stay as they are.

use std::borrow::Cow;

use super::error::{edit_prefix, preview, reason};
use super::text::{is_blank, leading_space};
use super::{EditError, Match, Strategy, find_matches};

/// One edit as the tools receive it, after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditSpec {
    /// The text to find.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every match instead of requiring exactly one.
    pub replace_all: bool,
}

/// The outcome of one successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The whole new file content.
    pub content: String,
    /// The strategy that located the old text.
    pub strategy: Strategy,
    /// How many places were replaced (1 unless `replace_all`).
    pub replacements: usize,
}

/// Replaces `old` with `new` in `content`. Without `replace_all`, `old` must match exactly
/// once. `edit_index` names the edit in error messages (`edits[i]: ...`).
pub fn find_and_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    edit_index: usize,
) -> Result<Replaced, EditError> {
    let matches = find_matches(content, old);
    let Some(strategy) = matches.first().map(|m| m.strategy) else {
        let message = format!(
            "{}old_string was not found in the file, not even ignoring case or \
             whitespace. Read the file again and copy the text to change exactly. \
             old_string: \"{}\"",
            edit_prefix(Some(edit_index)),
            preview(old),
        );
        return Err(EditError::new(reason::OLD_STRING_NOT_FOUND, message));
    };
    if matches.len() > 1 && !replace_all {
        let message = format!(
            "{}old_string matches {n} places in the file ({strategy}). Include more \
             surrounding lines so it matches exactly one place, or set replace_all to \
             true to change all {n}. old_string: \"{old}\"",
            edit_prefix(Some(edit_index)),
            n = matches.len(),
            strategy = strategy.name(),
            old = preview(old),
        );
        return Err(EditError::new(reason::MULTIPLE_OCCURRENCES, message));
    }
    let mut out = String::with_capacity(content.len() + new.len() * matches.len());
    let mut copied = 0;
    for m in &matches {
        out.push_str(&content[copied..m.start]);
        out.push_str(&reindent(content, m, old, new));
        copied = m.end;
    }
    out.push_str(&content[copied..]);
    Ok(Replaced {
        content: out,
        strategy,
        replacements: matches.len(),
    })
}

/// Applies `edits` one after another, each to the previous result. Returns the final
/// content and each edit's strategy, or the first error — in which case nothing is
/// returned to write, so the file stays as it was.
pub fn apply_edits(
    content: &str,
    edits: &[EditSpec],
) -> Result<(String, Vec<Strategy>), EditError> {
    let mut current = Cow::Borrowed(content);
    let mut strategies = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let done = find_and_replace(
            &current,
            &edit.old_string,
            &edit.new_string,
            edit.replace_all,
            i,
        )?;
        strategies.push(done.strategy);
        current = Cow::Owned(done.content);
    }
    Ok((current.into_owned(), strategies))
}

/// `new` re-indented for the match `m` in `content` (see the module docs).
fn reindent<'a>(content: &str, m: &Match, old: &str, new: &'a str) -> Cow<'a, str> {
    if !m.strategy.reindents() {
        return Cow::Borrowed(new);
    }
    let line_start = content[..m.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = content[line_start..]
        .find('\n')
        .map_or(content.len(), |i| line_start + i);
    let matched = leading_space(&content[line_start..line_end]);
    let old_indent = old
        .split('\n')
        .find(|l| !is_blank(l))
        .map_or("", leading_space);
    if matched == old_indent {
        return Cow::Borrowed(new);
    }
    let lines = new.split('\n').enumerate().map(|(i, line)| {
        if is_blank(line) {
            return Cow::Borrowed(line);
        }
        match line.strip_prefix(old_indent) {
            Some(rest) if i == 0 => Cow::Borrowed(rest),
            Some(rest) => Cow::Owned(format!("{matched}{rest}")),
            None => Cow::Borrowed(line),
        }
    });
    Cow::Owned(lines.collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_keeps_the_files_indent_and_later_lines_get_it() {
        let content = "fn f() {\n\tlet a = 1;\n}\n";
        let new = "  if a {\n    b();\n  }";
        let done = find_and_replace(content, "  let a = 1;", new, false, 0).unwrap();
        assert_eq!(done.strategy, Strategy::TrimmedMatch);
        assert_eq!(done.content, "fn f() {\n\tif a {\n\t  b();\n\t}\n}\n");
    }

    #[test]
    fn blank_lines_and_foreign_indents_are_left_alone() {
        let content = "\tif x {\n\t\ty();\n\t}";
        let done = find_and_replace(
            content,
            "if x {\n    y();\n}",
            "if x {\n\n  z();\n}",
            false,
            0,
        )
        .unwrap();
        assert_eq!(done.strategy, Strategy::WhitespaceIgnoredMatch);
        assert_eq!(done.content, "\tif x {\n\n\t  z();\n\t}");
    }
}
