//! The conversation, in the order it happened: the task, each turn with the model's words
//! and its tool calls, what the runner told the model, the checks, resumes and compactions.
//! A nested agent's conversation is the same, inside the call it worked for.

use maud::{Markup, html};

use super::block::{Whole, block};
use super::text::count;
use super::{Ctx, call, dollars, turn_anchor};
use crate::report::transcript::{Entry, Response};

pub(super) fn conversation(cx: &Ctx<'_>) -> Markup {
    html! {
        section id="conversation" aria-labelledby="h-conversation" {
            h2 id="h-conversation" { "Conversation" }
            (entries(cx, 0))
        }
    }
}

/// An agent's entries (0: the main agent).
pub(super) fn entries(cx: &Ctx<'_>, agent: usize) -> Markup {
    let Some(a) = cx.t.agents.get(agent) else {
        return html! {};
    };
    let task = a
        .entries
        .iter()
        .position(|e| matches!(e, Entry::User { .. }));
    html! { @for (i, e) in a.entries.iter().enumerate() { (entry(cx, e, Some(i) == task)) } }
}

fn entry(cx: &Ctx<'_>, e: &Entry, task: bool) -> Markup {
    match e {
        Entry::Run(i) => run(cx, *i),
        Entry::Turn(row) => turn(cx, *row),
        Entry::User { seq, text, .. } => html! {
            div class="msg user" {
                h4 { (if task { "The task" } else { "To the model" }) }
                (block(cx, text, "text", Whole::Event(*seq)))
            }
        },
        Entry::Response(r) => response(cx, r),
        Entry::Attempt(n) => {
            html! { p class="note warn" { "Attempt " (n) ": the checks failed, so the agent was sent back to work." } }
        }
        Entry::Retry {
            turn,
            attempt,
            delay_ms,
            kind,
            message,
        } => html! {
            p class="note warn" { "Turn " (turn) ": the model request failed (" (kind) ": " (message) "); retry " (attempt) " after " (super::duration(*delay_ms)) "." }
        },
        Entry::Incomplete {
            turn,
            stop_reason,
            action,
        } => html! {
            p class="note warn" { "Turn " (turn) ": the answer was incomplete (" code { (stop_reason) } "); " (action) "." }
        },
        Entry::Compaction {
            turn,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            summary,
        } => html! {
            div class="note" {
                p { "Turn " (turn) ": the history was compacted from " (count(*tokens_before)) " to " (count(*tokens_after))
                    " tokens (" (messages_before) " → " (messages_after) " messages)." }
                @if let Some(s) = summary { details { summary { "The summary that replaced it" } (block(cx, s, "text", Whole::File("events.jsonl (its history.replaced event)"))) } }
            }
        },
        Entry::Check(c) => html! {
            p class=(format!("note {}", if c.passed { "" } else { "warn" })) {
                "Check " strong { (c.name) } " (attempt " (c.attempt) "): " (if c.passed { "passed" } else { "failed" })
                " — see " a href="#checks" { "Checks" }
            }
        },
        Entry::Validated { valid, errors } => html! {
            p class="note" { "The answer " (if *valid { "matches" } else { "does not match" }) " the output schema"
                @for e in errors { "; " (e) } "." }
        },
        Entry::Rule { turn, name, reason } => {
            html! { p class="note" { "Rule " code { (name) } " joined the instructions at turn " (turn) ": " (reason) "." } }
        }
        Entry::Warning(w) => html! { p class="note warn" role="note" { "Warning: " (w) } },
    }
}

fn run(cx: &Ctx<'_>, i: usize) -> Markup {
    let Some(r) = cx.t.runs.get(i) else {
        return html! {};
    };
    html! {
        @if r.resumed {
            h3 class="resume" { "Resumed at " (r.ts) }
            p class="meta" { "The run went on from its session (" (r.provider) " · " (r.model) ")." }
        }
    }
}

fn turn(cx: &Ctx<'_>, row: usize) -> Markup {
    let Some(t) = cx.t.turns.get(row) else {
        return html! {};
    };
    let last = cx.t.turns.len();
    html! {
        div class="turn" {
            h3 id=(turn_anchor(row)) {
                span { "Turn " (t.number) }
                span class="meta" { (super::clock(&t.started)) " · " (count(t.usage.input_tokens)) " in / "
                    (count(t.usage.output_tokens)) " out · " (dollars(t.cost.known())) }
                span class="nav" {
                    @if row > 0 { a href=(format!("#{}", turn_anchor(row - 1))) { "previous" } " · " }
                    @if row + 1 < last { a href=(format!("#{}", turn_anchor(row + 1))) { "next" } " · " }
                    a href="#timeline" { "all turns" }
                }
            }
        }
    }
}

fn response(cx: &Ctx<'_>, r: &Response) -> Markup {
    html! {
        div class="msg model" {
            @if !r.text.is_empty() || r.calls.is_empty() {
                h4 { "The model" }
                (block(cx, &r.text, "text", Whole::Event(r.seq)))
            }
            @if !r.reasoning.is_empty() {
                details { summary { "Its reasoning" } (block(cx, &r.reasoning, "text", Whole::Event(r.seq))) }
            }
            p class="meta" {
                @if let Some(u) = r.usage { (count(u.input_tokens)) " tokens in, " (count(u.output_tokens)) " out · " }
                "cost " (dollars(r.cost))
                @if let Some(s) = &r.stop_reason { " · stopped: " code { (s) } }
            }
            @for c in &r.calls { (call::call(cx, *c)) }
        }
    }
}
