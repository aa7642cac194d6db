//! The document: its head (the Content-Security-Policy, the one stylesheet by its hash),
//! the heading, the table of contents, the sections in order, and the footer.

use base64::Engine;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::Digest;

use super::{Ctx, conversation, sections, tables};
use crate::exit_code::Status;

const CSS: &str = include_str!("style.css");

/// The page's policy: nothing loads, nothing runs; only the stylesheet below, by hash.
pub(super) fn content_security_policy() -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(CSS));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src 'none'; font-src 'none'; \
         connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; \
         child-src 'none'; worker-src 'none'; manifest-src 'none'; script-src 'none'; \
         base-uri 'none'; form-action 'none'"
    )
}

/// The class an outcome is shown with.
pub(super) fn tone(status: Status) -> &'static str {
    match status {
        Status::Success => "ok",
        Status::LimitReached | Status::Interrupted | Status::ApprovalRequired => "warn",
        Status::Failed | Status::Invalid | Status::ProviderError | Status::InternalError => "bad",
    }
}

pub(super) fn page(cx: &Ctx<'_>) -> Markup {
    let r = &cx.t.result;
    let title = format!("cn-run: {} — {}", r.job, r.status.as_str());
    let parts = parts(cx);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(content_security_policy());
                meta name="referrer" content="no-referrer";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                meta name="generator" content=(format!("cn-run {}", env!("CARGO_PKG_VERSION")));
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                a class="skip" href="#conversation" { "Skip to the conversation" }
                header class="top" {
                    p class="meta" { "cn-run report · run " code { (r.run_id) } }
                    h1 { "Job " code { (r.job) } " — "
                        span class=(format!("badge {}", tone(r.status))) { (r.status.as_str()) } }
                }
                nav class="toc" aria-label="Sections" {
                    ul { @for (id, name, _) in &parts { li { a href=(format!("#{id}")) { (name) } } } }
                }
                main {
                    @for (_, _, part) in parts { (part) }
                }
                (footer(cx))
            }
        }
    }
}

/// A section of the page: its anchor, its name in the contents, and how it is made.
type Part = (&'static str, &'static str, fn(&Ctx<'_>) -> Markup);

/// The sections every page has, in order.
const ALWAYS: [Part; 6] = [
    ("outcome", "Outcome", sections::outcome),
    ("job", "Job", sections::job),
    ("policy", "Policy", sections::policy),
    ("sandbox", "Sandbox", sections::sandbox),
    ("timeline", "Turns", tables::timeline),
    ("conversation", "Conversation", conversation::conversation),
];

/// The sections a run may have, in order, after those.
const WHEN_ANY: [Part; 8] = [
    ("checks", "Checks", tables::checks),
    ("denials", "Denials", tables::denials),
    ("changes", "Changes", tables::changes),
    ("checkpoints", "Checkpoints", tables::checkpoints),
    ("artifacts", "Artifacts", tables::artifacts),
    ("mcp", "MCP servers", tables::mcp),
    ("subagents", "Subagents", tables::subagents),
    ("warnings", "Warnings", tables::warnings),
];

/// Whether the run has anything for the optional section `id`.
fn has(cx: &Ctx<'_>, id: &str) -> bool {
    let (t, r) = (cx.t, &cx.t.result);
    match id {
        "checks" => !r.checks.is_empty() || !r.checks_declared.is_empty(),
        "denials" => !r.permission_denials.is_empty(),
        "changes" => t.changes.is_some(),
        "checkpoints" => !t.checkpoints.is_empty(),
        "artifacts" => !r.artifacts.is_empty(),
        "mcp" => !r.mcp_servers.is_empty() || !t.notices.is_empty(),
        "subagents" => t.agents.len() > 1,
        "warnings" => !r.warnings.is_empty() || r.upload.is_some() || r.artifacts_upload.is_some(),
        _ => true,
    }
}

/// The sections with content, in order: (anchor, name in the contents, markup).
fn parts(cx: &Ctx<'_>) -> Vec<(&'static str, &'static str, Markup)> {
    ALWAYS
        .iter()
        .chain(WHEN_ANY.iter().filter(|(id, _, _)| has(cx, id)))
        .map(|(id, name, render)| (*id, *name, render(cx)))
        .collect()
}

fn footer(cx: &Ctx<'_>) -> Markup {
    let t = cx.t;
    let starved = cx.budget.borrow().starved;
    html! {
        footer {
            p {
                "Made by cn-run " (env!("CARGO_PKG_VERSION")) " from the run folder's events.jsonl ("
                (super::text::count(t.events as u64)) " events, the last with \"seq\": " (t.last_seq)
                ", at " (t.last_ts) ")" @if cx.patch.is_some() { " and diff.patch" } ". "
                "This page loads nothing and runs no script; the run's own words are shown as text."
            }
            @if starved > 0 {
                p { (starved) " texts are shown in part because the page's budget for text ("
                    (super::text::size(super::text::TOTAL)) ") was spent; each says where the whole text is." }
            }
        }
    }
}
