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

/// The sections with content, in order: (anchor, name in the contents, markup).
fn parts(cx: &Ctx<'_>) -> Vec<(&'static str, &'static str, Markup)> {
    let t = cx.t;
    let r = &t.result;
    let mut parts = vec![
        ("outcome", "Outcome", sections::outcome(cx)),
        ("job", "Job", sections::job(cx)),
        ("policy", "Policy", sections::policy(cx)),
        ("sandbox", "Sandbox", sections::sandbox(cx)),
        ("timeline", "Turns", tables::timeline(cx)),
        (
            "conversation",
            "Conversation",
            conversation::conversation(cx),
        ),
    ];
    let optional = [
        (
            "checks",
            "Checks",
            !r.checks.is_empty() || !r.checks_declared.is_empty(),
            tables::checks as fn(&Ctx<'_>) -> Markup,
        ),
        (
            "denials",
            "Denials",
            !r.permission_denials.is_empty(),
            tables::denials,
        ),
        ("changes", "Changes", t.changes.is_some(), tables::changes),
        (
            "checkpoints",
            "Checkpoints",
            !t.checkpoints.is_empty(),
            tables::checkpoints,
        ),
        (
            "artifacts",
            "Artifacts",
            !r.artifacts.is_empty(),
            tables::artifacts,
        ),
        (
            "mcp",
            "MCP servers",
            !r.mcp_servers.is_empty() || !t.notices.is_empty(),
            tables::mcp,
        ),
        (
            "subagents",
            "Subagents",
            t.agents.len() > 1,
            tables::subagents,
        ),
        (
            "warnings",
            "Warnings",
            !r.warnings.is_empty() || r.upload.is_some() || r.artifacts_upload.is_some(),
            tables::warnings,
        ),
    ];
    for (id, name, shown, render) in optional {
        if shown {
            parts.push((id, name, render(cx)));
        }
    }
    parts
}

fn footer(cx: &Ctx<'_>) -> Markup {
    let t = cx.t;
    let starved = cx.budget.borrow().starved;
    html! {
        footer {
            p {
                "Made by cn-run " (env!("CARGO_PKG_VERSION")) " from the run folder's events.jsonl ("
                (super::text::count(t.events as u64)) " events, the last with \"seq\": " (t.last_seq)
                ", at " (t.last_ts) ")" @if t.changes.is_some() { " and diff.patch" } ". "
                "This page loads nothing and runs no script; the run's own words are shown as text."
            }
            @if starved > 0 {
                p { (starved) " texts are shown in part because the page's budget for text ("
                    (super::text::size(super::text::TOTAL)) ") was spent; each says where the whole text is." }
            }
        }
    }
}
