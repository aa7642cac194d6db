//! report.html: the run as one self-contained page for people — the outcome and why, the
//! job and the policy in force, the sandbox, the turns with their tokens and cost, the
//! conversation with every tool call (arguments, verdict and rule, output, diff,
//! checkpoint), the checks, denials, changes, artifacts, MCP servers and subagents.
//!
//! It is a fold over events.jsonl ([`super::transcript`]) plus the run folder's
//! diff.patch, so the run (at its end) and `cn-run report RUN --html FILE` write the same
//! bytes. Model and tool text is untrusted: every value goes through maud's escaping (no
//! text is ever written as markup), nothing is linked but the page's own anchors, and a
//! Content-Security-Policy allows only the page's one stylesheet, by its hash — no script,
//! no image, no font, no frame, no request of any kind. The page needs no JavaScript:
//! folds are `<details>`, navigation is anchors.

mod block;
mod call;
mod conversation;
mod diff;
mod page;
mod sections;
mod tables;
pub mod text;

use std::cell::RefCell;
use std::path::Path;

use super::rebuild::{EventsError, read_events};
use super::transcript::Transcript;
use crate::redact::Redactor;
use text::Budget;

/// The report's name in the run folder.
pub const FILE_NAME: &str = "report.html";
/// diff.patch is read up to this many bytes (the page's text budget cuts it further).
const PATCH_READ: u64 = 4 << 20;

/// What every part of the page reads: the transcript, diff.patch, the text budget.
pub(super) struct Ctx<'a> {
    t: &'a Transcript,
    patch: Option<&'a str>,
    budget: RefCell<Budget>,
}

/// The page of `t`, with `patch` (diff.patch's text, when it may be shown). Every string
/// of the page is masked by `redactor` before it is escaped, and the page once more after.
pub fn render(t: &Transcript, patch: Option<&str>, redactor: &Redactor) -> String {
    render_within(t, patch, redactor, text::TOTAL)
}

/// [`render`] with a budget of `total` bytes for texts.
fn render_within(t: &Transcript, patch: Option<&str>, redactor: &Redactor, total: usize) -> String {
    let patch = patch.map(|p| redactor.redact(p));
    let cx = Ctx {
        t,
        patch: patch.as_deref(),
        budget: RefCell::new(Budget::new(total)),
    };
    let html = page::page(&cx).into_string();
    text::visible(redactor.redact(&html).into_owned())
}

/// The run folder's diff.patch as the page may show it: none when the run said it holds
/// a secret's value (the patch is kept exact; the page is not), or wrote none.
pub fn read_patch(dir: &Path, t: &Transcript) -> Option<String> {
    let changes = t.changes.as_ref()?;
    if changes.secret_in_diff || changes.patch_path.is_none() {
        return None;
    }
    let file = std::fs::File::open(dir.join("diff.patch")).ok()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, PATCH_READ), &mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// report.html of the run in `dir`, from its events.jsonl and diff.patch (nothing is
/// written). The events were masked by the run; `redactor` masks what else the caller
/// knows of.
pub fn rebuild(dir: &Path, redactor: &Redactor) -> Result<String, EventsError> {
    let events = read_events(&dir.join("events.jsonl"))?;
    let t = Transcript::of(&events, redactor);
    let patch = read_patch(dir, &t);
    Ok(render(&t, patch.as_deref(), redactor))
}

/// The anchors of the page's parts.
fn call_anchor(i: usize) -> String {
    format!("c{}", i + 1)
}

fn turn_anchor(row: usize) -> String {
    format!("t{}", row + 1)
}

fn checkpoint_anchor(i: usize) -> String {
    format!("k{}", i + 1)
}

/// `2026-12-05T22:40:33.311Z` as `22:40:33`.
fn clock(ts: &str) -> &str {
    ts.get(11..19).unwrap_or(ts)
}

/// Milliseconds as people read them.
fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
    }
}

/// Milliseconds from one event time to another.
fn between(from: &str, to: &str) -> Option<u64> {
    let a = from.parse::<jiff::Timestamp>().ok()?;
    let b = to.parse::<jiff::Timestamp>().ok()?;
    u64::try_from(b.as_millisecond() - a.as_millisecond()).ok()
}

/// A cost in dollars; unknown is said, never 0.
fn dollars(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!("${c:.4}"),
        None => "unknown".to_owned(),
    }
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
