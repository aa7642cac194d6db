//! One tool call: its name, the verdict and the rule behind it, its arguments (a command,
//! an edit as a diff, or JSON), its result, the checkpoint taken after it and, for a
//! Subagent call, the nested agent's conversation.

use maud::{Markup, html};
use serde_json::Value;

use super::block::{Whole, block};
use super::sections::word;
use super::{Ctx, call_anchor, checkpoint_anchor, conversation, diff, duration};
use crate::events::{Resolution, ToolStatus};
use crate::permissions::Decision;
use crate::report::transcript::{Call, Verdict};

pub(super) fn call(cx: &Ctx<'_>, i: usize) -> Markup {
    let Some(c) = cx.t.calls.get(i) else {
        return html! {};
    };
    let (class, badge, tone) = verdict_badge(&c.verdict);
    html! {
        section class=(format!("call {class}")) id=(call_anchor(i)) aria-label=(format!("Tool call {} ({badge})", c.name)) {
            h5 {
                code { (c.name) }
                span class=(format!("badge {tone}")) { (badge) }
                @if c.status == Some(ToolStatus::Error) && class == "allowed" { span class="badge bad" { "error" } }
                span class="meta" { "call " code { (c.id) } @if let Some(ms) = c.duration_ms { " · " (duration(ms)) } }
            }
            p class="why" { (why(&c.verdict)) }
            (arguments(cx, c))
            (result(cx, c))
            @if let Some(k) = c.checkpoint.and_then(|k| cx.t.checkpoints.get(k).map(|m| (k, m))) {
                p class="meta" { "Then " a href=(format!("#{}", checkpoint_anchor(k.0))) { "checkpoint " (k.1.index) }
                    ": " (k.1.files_changed) " file(s) changed, commit " code { (short(&k.1.commit)) } }
            }
            @if let Some(a) = c.subagent {
                details class="sub" {
                    summary { "The subagent's conversation (" (cx.t.agents.get(a).map_or(0, |a| a.responses)) " responses)" }
                    div class="sub" { (conversation::entries(cx, a)) }
                }
            }
        }
    }
}

/// The call's class, its badge's word and the badge's tone.
fn verdict_badge(v: &Verdict) -> (&'static str, &'static str, &'static str) {
    match v {
        Verdict::Allowed(_) => ("allowed", "allowed", "ok"),
        Verdict::Decided { resolution, .. } => match resolution {
            Resolution::Allowed => ("allowed", "asked, allowed by on_ask", "warn"),
            Resolution::Denied => ("denied", "denied", "bad"),
            Resolution::Failed => ("denied", "needed approval: run stopped", "bad"),
            Resolution::Deferred => ("notrun", "deferred: waits for approval", "warn"),
        },
        Verdict::NotRun => ("notrun", "not run", "warn"),
    }
}

/// The verdict in words, with the rule and where it came from.
fn why(v: &Verdict) -> String {
    match v {
        Verdict::Allowed(Some(d)) => format!("Allowed: {}.", decided_by(d)),
        Verdict::Allowed(None) => "Allowed (these events do not say by which rule).".to_owned(),
        Verdict::Decided {
            resolution,
            decision,
        } => {
            let mut text = format!(
                "{} ({}): {}.",
                decision.permission.as_str(),
                word(resolution),
                decided_by(decision)
            );
            if let Some(hint) = &decision.allow_hint {
                text.push_str(&format!(" A job allows it with `allow: [\"{hint}\"]`."));
            }
            text
        }
        Verdict::NotRun => "Answered without a policy check: see the result.".to_owned(),
    }
}

fn decided_by(d: &Decision) -> String {
    let rule = d
        .rule
        .as_deref()
        .map_or_else(|| "no rule matched".to_owned(), |r| format!("rule `{r}`"));
    format!(
        "{rule} (from {}) — {}",
        word(&d.source),
        d.reason.trim_end_matches('.')
    )
}

/// The arguments: a command as a command, an edit as a diff, anything else as JSON.
fn arguments(cx: &Ctx<'_>, c: &Call) -> Markup {
    let parsed = c
        .arguments
        .clone()
        .or_else(|| serde_json::from_str::<Value>(&c.raw_arguments).ok());
    let Some(args) = parsed.filter(Value::is_object) else {
        return html! {
            @if !c.raw_arguments.trim().is_empty() {
                p class="meta" { "Arguments (not a JSON object, as the model sent them):" }
                (block(cx, &c.raw_arguments, "args", Whole::Event(c.seq)))
            }
        };
    };
    let text = |k: &str| args.get(k).and_then(Value::as_str);
    match (c.name.as_str(), text("command")) {
        ("Bash", Some(cmd)) => html! {
            (block(cx, cmd, "cmd", Whole::Event(c.seq)))
            (other_fields(cx, c, &args, &["command"]))
        },
        _ => match diff::of_call(cx, &c.name, &args, c.seq) {
            Some(d) => d,
            None => other_fields(cx, c, &args, &[]),
        },
    }
}

/// The arguments not shown otherwise, as JSON.
fn other_fields(cx: &Ctx<'_>, c: &Call, args: &Value, shown: &[&str]) -> Markup {
    let mut rest = args.clone();
    if let Some(map) = rest.as_object_mut() {
        map.retain(|k, _| !shown.contains(&k.as_str()));
        if map.is_empty() {
            return html! {};
        }
    }
    let json = serde_json::to_string_pretty(&rest).unwrap_or_default();
    block(cx, &json, "args", Whole::Event(c.seq))
}

fn result(cx: &Ctx<'_>, c: &Call) -> Markup {
    html! {
        @match (&c.output, c.output_seq) {
            (Some(out), Some(seq)) => {
                p class="meta" { "Result" @if c.is_error { " (an error)" } ":" }
                (block(cx, out, "out", Whole::Event(seq)))
            },
            _ => p class="meta" { "No result recorded (the run ended while the call ran)." },
        }
        @for image in &c.images { p class="meta" { "An image (" (image) "), not shown here." } }
    }
}

/// A commit's first 12 characters.
pub(super) fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
