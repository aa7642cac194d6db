//! The sections that are lists: the turns (with tokens and cost), checks, denials, the
//! changes and diff, checkpoints, artifacts, MCP servers, subagents and warnings.

use maud::{Markup, html};

use super::block::{Whole, block};
use super::call::short;
use super::sections::word;
use super::text::{count, size};
use super::{Ctx, between, call_anchor, checkpoint_anchor, diff, dollars, duration, turn_anchor};

fn section(id: &str, title: &str, body: &Markup) -> Markup {
    html! {
        section id=(id) aria-labelledby=(format!("h-{id}")) {
            h2 id=(format!("h-{id}")) { (title) }
            (body)
        }
    }
}

pub(super) fn timeline(cx: &Ctx<'_>) -> Markup {
    let turns = &cx.t.turns;
    let most = turns
        .iter()
        .map(|t| t.usage.total())
        .max()
        .unwrap_or(0)
        .max(1);
    section(
        "timeline",
        "Turns",
        &html! {
            @if turns.is_empty() { p class="muted" { "No turn started." } }
            @else {
                p class="meta" { "Tokens and cost of each turn's responses (a subagent's count in the turn that called it)." }
                div class="table" { table {
                    thead { tr { th class="num" { "Turn" } th { "At" } th class="num" { "Took" } th class="num" { "In" }
                        th class="num" { "Out" } th class="num" { "Cost" } th { "Tokens" } th { "Calls" } } }
                    tbody { @for (row, t) in turns.iter().enumerate() { tr {
                        td class="num" { a href=(format!("#{}", turn_anchor(row))) { (t.number) } }
                        td class="num" { (super::clock(&t.started)) }
                        td class="num" { (between(&t.started, &t.ended).map_or_else(String::new, duration)) }
                        td class="num" { (count(t.usage.input_tokens)) }
                        td class="num" { (count(t.usage.output_tokens)) }
                        td class="num" { (dollars(t.cost.known())) }
                        td { meter min="0" max=(most) value=(t.usage.total()) title=(format!("{} tokens", t.usage.total())) {} }
                        td { @for (i, c) in t.calls.iter().enumerate() { @if i > 0 { " " }
                            a href=(format!("#{}", call_anchor(*c))) { (short_name(&cx.t.calls[*c].name)) } } }
                    } } }
                } }
            }
        },
    )
}

/// A tool's name as a list shows it: at most 40 characters (the call shows it whole).
fn short_name(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

pub(super) fn checks(cx: &Ctx<'_>) -> Markup {
    let r = &cx.t.result;
    section(
        "checks",
        "Checks",
        &html! {
            @if r.checks.is_empty() { p { "Declared but not run: " @for c in &r.checks_declared { code { (c) } " " } } }
            @for c in &r.checks {
                div class=(format!("call {}", if c.passed { "allowed" } else { "denied" })) {
                    h5 { (c.name) span class=(format!("badge {}", if c.passed { "ok" } else { "bad" })) { (if c.passed { "passed" } else { "failed" }) }
                        span class="meta" { "attempt " (c.attempt) " · exit " (c.exit_code.map_or_else(|| "none".to_owned(), |e| e.to_string()))
                            " · " (duration(c.duration_ms)) @if c.timed_out { " · timed out" } } }
                    p class="meta" { "The last lines of its output:" }
                    (block(cx, &c.output_tail, "out", Whole::Recorded))
                }
            }
        },
    )
}

pub(super) fn denials(cx: &Ctx<'_>) -> Markup {
    let link = |id: &str| cx.t.calls.iter().rposition(|c| c.id == id && c.agent == 0);
    section(
        "denials",
        "Denials",
        &html! {
            div class="table" { table {
                thead { tr { th class="num" { "Turn" } th { "Call" } th { "Verdict" } th { "Rule" } th { "Why" } th { "A job allows it with" } } }
                tbody { @for d in &cx.t.result.permission_denials { tr {
                    td class="num" { (d.turn) }
                    td { @match link(&d.call_id) { Some(i) => a href=(format!("#{}", call_anchor(i))) { (d.tool) }, None => (d.tool) } }
                    td { (d.permission) " → " (d.resolution) }
                    td { @if let Some(rule) = &d.rule { code { (rule) } } " (" (d.source) ")" }
                    td { (d.reason) }
                    td { @if let Some(h) = &d.allow_hint { code { (h) } } }
                } } }
            } }
        },
    )
}

pub(super) fn changes(cx: &Ctx<'_>) -> Markup {
    let Some(c) = &cx.t.changes else {
        return html! {};
    };
    section(
        "changes",
        "Changes",
        &html! {
            @if let Some(d) = c.diff { p { (d.files) " file(s) changed, +" (d.insertions) " −" (d.deletions) " (diff.patch)." } }
            @else { p class="muted" { "No diff (not a git workspace, or the diff failed: see Warnings)." } }
            @if let Some(bytes) = c.git_added_bytes { p class="meta" { "The checkpoints added " (size(bytes as usize)) " to .git." } }
            @if !c.skipped.is_empty() {
                p { "Left out of the checkpoints for their size: " @for s in &c.skipped { code { (s.path) } " (" (size(s.bytes as usize)) ") " } }
            }
            @if c.secret_in_diff {
                p class="note warn" { "diff.patch holds the value of a secret (it is kept exact for review), so it is not shown here." }
            } @else if let Some(patch) = cx.patch { (diff::patch(cx, patch, &c.files)) }
        },
    )
}

pub(super) fn checkpoints(cx: &Ctx<'_>) -> Markup {
    section(
        "checkpoints",
        "Checkpoints",
        &html! {
            p class="meta" { "Snapshots of the workspace (hidden git refs); " code { "cn-run rollback RUN --to N" } " goes back to one." }
            div class="table" { table {
                thead { tr { th class="num" { "N" } th { "After" } th class="num" { "Files" } th { "Commit" } th { "Ref" } } }
                tbody { @for (i, k) in cx.t.checkpoints.iter().enumerate() { tr id=(checkpoint_anchor(i)) {
                    td class="num" { (k.index) }
                    td { @match k.call { Some(c) => a href=(format!("#{}", call_anchor(c))) { (k.label) }, None => (k.label) } }
                    td class="num" { (k.files_changed) }
                    td { code { (short(&k.commit)) } }
                    td { code { (k.reference) } }
                } } }
            } }
        },
    )
}

pub(super) fn artifacts(cx: &Ctx<'_>) -> Markup {
    section(
        "artifacts",
        "Artifacts",
        &html! {
            div class="table" { table {
                thead { tr { th { "File" } th class="num" { "Size" } th { "Type" } th { "SHA-256" } } }
                tbody { @for a in &cx.t.result.artifacts { tr {
                    td { code { (a.path) } } td class="num" { (size(a.size as usize)) } td { (a.kind) } td { code { (a.sha256) } }
                } } }
            } }
        },
    )
}

pub(super) fn mcp(cx: &Ctx<'_>) -> Markup {
    section(
        "mcp",
        "MCP servers",
        &html! {
            div class="table" { table {
                thead { tr { th { "Server" } th { "Transport" } th { "Status" } th class="num" { "Tools" } th class="num" { "Start" } th { "Note" } } }
                tbody { @for s in &cx.t.result.mcp_servers { tr {
                    td { code { (s.name) } } td { (word(&s.transport)) }
                    td { span class=(format!("badge {}", if s.status.as_str() == "ready" { "ok" } else { "bad" })) { (s.status.as_str()) } }
                    td class="num" { (s.tools) } td class="num" { (duration(s.startup_ms)) }
                    td { @if let Some(m) = &s.message { (m) } }
                } } }
            } }
            @for (server, n, last) in &cx.t.notices {
                p class="meta" { code { (server) } " sent " (n) " notification(s)" @if let Some(m) = last { "; the last: " (m) } }
            }
        },
    )
}

pub(super) fn subagents(cx: &Ctx<'_>) -> Markup {
    section(
        "subagents",
        "Subagents",
        &html! {
            p class="meta" { "Each nested agent's conversation is inside the call it worked for." }
            div class="table" { table {
                thead { tr { th { "Call" } th class="num" { "Responses" } th class="num" { "In" } th class="num" { "Out" } th class="num" { "Cost" } } }
                tbody { @for a in cx.t.agents.iter().skip(1) { tr {
                    td { @match a.call { Some(c) => a href=(format!("#{}", call_anchor(c))) { (cx.t.calls[c].name) " " code { (cx.t.calls[c].id) } },
                        None => code { (a.parent.clone().unwrap_or_default()) } } }
                    td class="num" { (a.responses) } td class="num" { (count(a.usage.input_tokens)) }
                    td class="num" { (count(a.usage.output_tokens)) } td class="num" { (dollars(a.cost.known())) }
                } } }
            } }
        },
    )
}

pub(super) fn warnings(cx: &Ctx<'_>) -> Markup {
    let r = &cx.t.result;
    let uploads = [
        ("Session upload", &r.upload),
        ("Artifacts upload", &r.artifacts_upload),
    ];
    section(
        "warnings",
        "Warnings",
        &html! {
            ul { @for w in &r.warnings { li { (w) } } }
            @for (what, u) in uploads { @if let Some(u) = u {
                p { (what) ": " (if u.ok { "ok" } else { "failed" }) ", " (u.uploads) " PUTs, " (u.failures) " failed"
                    @if let Some(e) = &u.last_error { " (last error: " (e) ")" } }
            } }
        },
    )
}
