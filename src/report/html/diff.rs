//! Diffs as people read them: an Edit or MultiEdit call's change (its old and new text, as
//! a line diff), a Write call's content (every line added), and the run's diff.patch file
//! by file. Each line keeps its `+`/`-` mark, so the page reads the same without colour.

use maud::{Markup, html};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::Ctx;
use super::block::{Whole, block_with};
use crate::report::github::patch_files::FileChange;

/// The diff of an Edit, MultiEdit or Write call's arguments (`None` for other tools).
pub(super) fn of_call(cx: &Ctx<'_>, tool: &str, args: &Value, seq: u64) -> Option<Markup> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let (path, body) = match tool {
        "Edit" => (
            text(args, "file_path")?,
            edit(&text(args, "old_string")?, &text(args, "new_string")?),
        ),
        "MultiEdit" => {
            let edits = args.get("edits")?.as_array()?;
            let body = edits
                .iter()
                .map(|e| Some(edit(&text(e, "old_string")?, &text(e, "new_string")?)))
                .collect::<Option<Vec<String>>>()?;
            (text(args, "file_path")?, body.join("@@ next edit @@\n"))
        }
        "Write" => (text(args, "filepath")?, added(&text(args, "content")?)),
        _ => return None,
    };
    let replace_all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
    Some(html! {
        p class="meta" { (tool) " " code { (path) }
            @if tool == "Write" { " (the whole new content; the earlier content is not in the events)" }
            @if replace_all { " (every occurrence)" } }
        (block_with(cx, &body, "diff", Whole::Event(seq), lines))
    })
}

/// `old` → `new` as a line diff with three lines of context.
fn edit(old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    for group in diff.grouped_ops(3) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let mark = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                out.push(mark);
                out.push_str(change.value().trim_end_matches('\n'));
                out.push('\n');
            }
        }
    }
    out
}

/// Every line of `content` as added.
fn added(content: &str) -> String {
    content.lines().map(|l| format!("+{l}\n")).collect()
}

/// Diff lines, each in the class of its mark.
fn lines(text: &str) -> Markup {
    html! {
        @for line in text.lines() {
            span class=(class(line)) { (line) }
        }
    }
}

fn class(line: &str) -> &'static str {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
        "hunk"
    } else if line.starts_with('+') {
        "add"
    } else if line.starts_with('-') {
        "del"
    } else if line.starts_with("@@") || line.starts_with("index ") {
        "hunk"
    } else {
        "ctx"
    }
}

/// diff.patch, file by file, each with its counts from `changes.recorded`.
pub(super) fn patch(cx: &Ctx<'_>, text: &str, files: &[FileChange]) -> Markup {
    html! {
        @for part in split_files(text) {
            details open {
                summary { (file_label(part, files)) }
                (block_with(cx, part, "diff", Whole::File("diff.patch"), lines))
            }
        }
    }
}

/// The patch cut before each `diff --git` line.
fn split_files(text: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = text
        .match_indices("diff --git ")
        .filter(|(i, _)| *i == 0 || text.as_bytes()[i - 1] == b'\n')
        .map(|(i, _)| i)
        .collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    starts.push(text.len());
    starts
        .windows(2)
        .map(|w| &text[w[0]..w[1]])
        .filter(|p| !p.is_empty())
        .collect()
}

fn file_label(part: &str, files: &[FileChange]) -> String {
    let first = part.lines().next().unwrap_or_default();
    let name = first
        .strip_prefix("diff --git a/")
        .map_or(first, |rest| rest.split(" b/").next().unwrap_or(rest));
    match files.iter().find(|f| f.path == name) {
        Some(c) => format!("{name} (+{} −{})", c.insertions, c.deletions),
        None => name.to_owned(),
    }
}
