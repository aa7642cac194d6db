//! The sections about the run as a whole: its outcome and why, the job, the policy in
//! force and the sandbox's enforcement.

use maud::{Markup, html};
use serde::Serialize;
use serde_json::Value;

use super::block::{Whole, block};
use super::text::count;
use super::{Ctx, dollars, duration};
use crate::exit_code::Limit;
use crate::report::transcript::{RunStart, Verdict};

/// A value as a word: a string without quotes, anything else as JSON, null as a dash.
pub(super) fn word<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(Value::Null) | Err(_) => "—".to_owned(),
        Ok(v) => v.to_string(),
    }
}

/// A field of the resolved configuration, as a word.
fn config(cx: &Ctx<'_>, path: &[&str]) -> String {
    let mut v = cx.t.config.as_ref();
    for key in path {
        v = v.and_then(|v| v.get(*key));
    }
    v.map_or_else(|| "—".to_owned(), word)
}

/// The newest start of the run.
fn newest<'a>(cx: &Ctx<'a>) -> Option<&'a RunStart> {
    cx.t.runs.last()
}

pub(super) fn outcome(cx: &Ctx<'_>) -> Markup {
    let r = &cx.t.result;
    let u = &r.usage;
    html! {
        section id="outcome" aria-labelledby="h-outcome" {
            h2 id="h-outcome" { "Outcome" }
            div class=(format!("outcome {}", super::page::tone(r.status))) {
                p { strong { (r.status.as_str()) } " · exit code " strong { (r.exit_code) } " · " code { (r.subtype) } }
                p { (r.reason) }
                @if let Some(limit) = r.limit { p { "Limit reached: " strong { (limit.as_str()) } (limit_setting(cx, limit)) } }
                @if cx.t.runs.len() > 1 {
                    p class="meta" { "The run was started " (cx.t.runs.len()) " times (resumed); the outcome is the newest run's." }
                }
            }
            dl class="facts" {
                dt { "Turns" } dd { (r.num_turns) }
                dt { "Tool calls" } dd { (r.num_tool_calls) " ran · " (r.permission_denials.len()) " not allowed outright (see Denials)" }
                dt { "Duration" } dd { (duration(r.duration_ms)) " (" (r.started_at) " to " (r.finished_at) ")" }
                dt { "Tokens" } dd { (count(u.input_tokens)) " in (" (count(u.cache_read_tokens)) " read from cache, "
                    (count(u.cache_write_tokens)) " written to it) · " (count(u.output_tokens)) " out" }
                dt { "Cost" } dd { (dollars(r.total_cost_usd)) }
                dt { "Attempts" } dd { (r.attempts) }
                dt { "Agent finished" } dd { (if r.agent_finished { "yes" } else { "no" }) }
                @if let Some(stop) = &r.stop_reason { dt { "Last stop reason" } dd { code { (stop) } } }
            }
            h3 { "Final answer" }
            @if r.result.is_empty() { p class="muted" { "(none)" } }
            @else { (block(cx, &r.result, "text", Whole::File("result.json"))) }
            @if let Some(v) = &r.structured_output {
                h3 { "Structured output" }
                (block(cx, &serde_json::to_string_pretty(v).unwrap_or_default(), "json", Whole::File("result.json")))
            }
            @if let Some(list) = &r.checklist {
                h3 { "Checklist" }
                (block(cx, list, "text", Whole::File("result.json")))
            }
        }
    }
}

/// ` (max_turns: 12, from the job)`: the setting the limit came from.
fn limit_setting(cx: &Ctx<'_>, limit: Limit) -> String {
    let (key, source) = match limit {
        Limit::MaxTurns => ("max_turns", None),
        Limit::Timeout => ("timeout_s", Some("timeout_source")),
        Limit::MaxCost => ("max_cost_usd", None),
        Limit::MaxTokens => ("max_tokens", None),
    };
    let value = config(cx, &["limits", key]);
    match source {
        Some(s) => format!(" ({key}: {value}, from the {})", config(cx, &["limits", s])),
        None => format!(" ({key}: {value})"),
    }
}

/// The run's limits in words (`none` where the run had none).
fn limits(cx: &Ctx<'_>) -> String {
    let get = |key: &str| {
        let v = config(cx, &["limits", key]);
        (v != "—").then_some(v)
    };
    let none = || "none".to_owned();
    format!(
        "turns: {} · time: {} · cost: {} · tokens: {} · calls per response: {}",
        get("max_turns").unwrap_or_else(none),
        get("timeout_s").map_or_else(none, |s| format!(
            "{s} s (from the {})",
            config(cx, &["limits", "timeout_source"])
        )),
        get("max_cost_usd").map_or_else(none, |c| format!("${c}")),
        get("max_tokens").unwrap_or_else(none),
        get("max_calls_per_response").unwrap_or_else(none),
    )
}

pub(super) fn job(cx: &Ctx<'_>) -> Markup {
    let run = newest(cx);
    let r = &cx.t.result;
    html! {
        section id="job" aria-labelledby="h-job" {
            h2 id="h-job" { "Job" }
            dl class="facts" {
                dt { "Job" } dd { code { (r.job) } }
                dt { "Model" } dd { (r.provider) " · " code { (r.model) } " (context " (config(cx, &["model", "context_length"])) " tokens)" }
                dt { "Workspace" } dd { code { (r.workspace) } @if let Some(i) = &r.isolation { " (" (i) ")" } }
                dt { "Limits" } dd { (limits(cx)) }
                dt { "Trust" } dd { @if config(cx, &["trust", "untrusted"]) == "true" { "untrusted (tool output marked; base ref "
                    (config(cx, &["trust", "base_ref"])) ")" } @else { "trusted workspace" } }
                @if let Some(run) = run {
                    dt { "Tools offered" } dd { @for (i, tool) in run.tools.iter().enumerate() { @if i > 0 { ", " } code { (tool) } } }
                    dt { "Checks declared" } dd { @if run.checks.is_empty() { "none" } @for (i, c) in run.checks.iter().enumerate() { @if i > 0 { ", " } (c) } }
                }
                dt { "Rules applied" } dd { @if r.rules_applied.is_empty() { "none" }
                    @for (i, rule) in r.rules_applied.iter().enumerate() { @if i > 0 { "; " } (rule.name) " (" (rule.reason) ")" } }
            }
            @if let Some(run) = cx.t.runs.first() {
                h3 { "Task" }
                (block(cx, &run.prompt, "text", Whole::Event(run.seq)))
            }
        }
    }
}

pub(super) fn policy(cx: &Ctx<'_>) -> Markup {
    let run = newest(cx);
    let calls = &cx.t.calls;
    let allowed = calls
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Allowed(_)))
        .count();
    let decided = calls
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Decided { .. }))
        .count();
    let not_run = calls.len() - allowed - decided;
    html! {
        section id="policy" aria-labelledby="h-policy" {
            h2 id="h-policy" { "Policy" }
            p { "Mode " code { (run.map_or("—", |r| r.mode.as_str())) } " · a call that needs approval: "
                code { (config(cx, &["on_ask"])) }
                @if cx.t.config.is_some() { " (from the " (config(cx, &["on_ask_source"])) ")" }
                " · the first rule that matches decides; no match means ask." }
            p { (allowed) " calls allowed, " (decided) " needed more than a rule (see Denials), " (not_run) " answered without running." }
            @match run.map(|r| &r.policy) {
                Some(rules) if !rules.is_empty() => div class="table" { table {
                    thead { tr { th class="num" { "#" } th { "Rule" } th { "Gives" } th { "From" } } }
                    tbody { @for (i, rule) in rules.iter().enumerate() { tr {
                        td class="num" { (i + 1) } td { code { (rule.pattern) } } td { (rule.permission.as_str()) }
                        td { (word(&rule.source)) @if let Some(f) = &rule.file { " (" (f) ")" } }
                    } } }
                } },
                _ => p class="muted" { "The events of this run do not list its rules (written by an earlier cn-run)." },
            }
        }
    }
}

pub(super) fn sandbox(cx: &Ctx<'_>) -> Markup {
    let status = newest(cx).and_then(|r| r.sandbox.as_ref());
    html! {
        section id="sandbox" aria-labelledby="h-sandbox" {
            h2 id="h-sandbox" { "Sandbox" }
            @match status {
                None => p class="badge warn" { "off: commands ran uncontained" },
                Some(s) => {
                    p { "Mechanism " strong { (s.mechanism) } " · mode " code { (s.mode.as_str()) }
                        " · network " (if s.network { "allowed" } else if s.hosts.is_empty() { "none" } else { "listed hosts only" })
                        @if s.required { " · required (the run refuses to go without it)" } }
                    p { "Enforced: " @for p in &s.enforced { span class="badge ok" { (word(p)) } " " }
                        @if s.enforced.is_empty() { "nothing" } }
                    @if !s.missing.is_empty() {
                        p { "Not enforced: " @for p in &s.missing { span class="badge bad" { (word(p)) } " " } }
                    }
                    dl class="facts" {
                        dt { "Writable" } dd { @for w in &s.writable { code { (w) } " " } }
                        dt { "Hidden" } dd { @for h in &s.hidden { code { (h) } " " } }
                        @if !s.hosts.is_empty() { dt { "Hosts" } dd { @for h in &s.hosts { code { (h) } " " } } }
                    }
                    @for n in &s.notes { p class="note warn" { (n) } }
                }
            }
        }
    }
}
