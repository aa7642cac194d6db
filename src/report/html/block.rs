//! A text on the page: the first lines in view, the rest folded (`<details>`, which opens
//! with a keyboard and prints open), and a long text's middle left out with a line that
//! says how much and where the whole text is ([`super::text`] decides the parts).

use maud::{Markup, html};

use super::Ctx;
use super::text::{Shown, count, line_count, size};

/// A text of at most this many lines and bytes is never folded (a diff's limits are
/// larger); a longer one shows half as many before its fold.
const WHOLE_LINES: usize = 24;
const WHOLE_BYTES: usize = 3000;
const WHOLE_DIFF_LINES: usize = 80;
const WHOLE_DIFF_BYTES: usize = 8000;

/// Where the whole of a text can be read when the page shows part of it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Whole<'a> {
    /// A line of events.jsonl (its `seq`); session.jsonl holds it too.
    Event(u64),
    /// A file of the run folder.
    File(&'a str),
    /// Nowhere: the run recorded only this much (e.g. a check's last lines).
    Recorded,
}

/// `text` as a block of the page: `class` is `text` (prose) or a `pre` kind.
pub(super) fn block(cx: &Ctx<'_>, text: &str, class: &str, whole: Whole<'_>) -> Markup {
    block_with(cx, text, class, whole, |s| html! { (s) })
}

/// `text` as a block whose shown parts `lines` renders (a diff colours its lines).
pub(super) fn block_with(
    cx: &Ctx<'_>,
    text: &str,
    class: &str,
    whole: Whole<'_>,
    lines: impl Fn(&str) -> Markup,
) -> Markup {
    let shown = cx.budget.borrow_mut().take(text);
    let room = if class == "diff" {
        (WHOLE_DIFF_LINES, WHOLE_DIFF_BYTES)
    } else {
        (WHOLE_LINES, WHOLE_BYTES)
    };
    let (view, rest) = split_view(&shown.head, shown.tail.is_some(), room);
    html! {
        pre class=(class) { (lines(view)) }
        @if !rest.is_empty() || shown.tail.is_some() {
            details {
                summary { (fold_label(&shown, line_count(view))) }
                @if !rest.is_empty() { pre class=(class) { (lines(rest)) } }
                @if let Some(tail) = &shown.tail {
                    (cut_note(&shown, whole))
                    pre class=(class) { (lines(tail)) }
                }
            }
        }
    }
}

/// The lines kept in view, and the rest of the shown head.
fn split_view(head: &str, cut: bool, (max_lines, max_bytes): (usize, usize)) -> (&str, &str) {
    if !cut && head.len() <= max_bytes && line_count(head) <= max_lines {
        return (head, "");
    }
    let by_lines = memchr::memchr_iter(b'\n', head.as_bytes())
        .nth(max_lines / 2 - 1)
        .map_or(head.len(), |i| i + 1);
    let mut end = by_lines.min(max_bytes / 2);
    if end < by_lines {
        while !head.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(i) = head[..end].rfind('\n') {
            end = i + 1;
        }
    }
    head.split_at(end)
}

fn fold_label(shown: &Shown, in_view: usize) -> String {
    let more = shown.lines.saturating_sub(in_view);
    let lines = format!(
        "{} more line{}",
        count(more as u64),
        if more == 1 { "" } else { "s" }
    );
    if shown.tail.is_some() {
        format!(
            "{lines} ({} in all; {} of it is not in this page)",
            size(shown.bytes),
            size(shown.hidden_bytes)
        )
    } else {
        format!("{lines} ({} in all)", size(shown.bytes))
    }
}

/// The line that stands for a text's middle.
fn cut_note(shown: &Shown, whole: Whole<'_>) -> Markup {
    let place = match whole {
        Whole::Event(seq) => format!(
            "the whole text is in events.jsonl (the event with \"seq\": {seq}) and session.jsonl"
        ),
        Whole::File(name) => format!("the whole text is in {name}"),
        Whole::Recorded => "the run recorded no more of it".to_owned(),
    };
    let why = if shown.starved {
        " (this page's budget for text is spent, so it shows less)"
    } else {
        ""
    };
    html! {
        p class="cut" role="note" {
            "… " (size(shown.hidden_bytes)) " (" (count(shown.hidden_lines as u64))
            " lines) not shown here" (why) ": " (place) "."
        }
    }
}
