//! The run as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, the one
//! Terminal-Bench reads): a step per message — the task and every message to the model
//! (`user`), each model response with its tool calls, their results as the observation
//! and the response's tokens and cost (`agent`), checks, resumes and compactions
//! (`system`) — the run's totals as final metrics, and each subagent as an embedded
//! trajectory its call refers to. Built from the same fold as report.html
//! ([`super::transcript`]); texts are whole (a trajectory is data, not a page).

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::rebuild::{EventsError, read_events};
use super::transcript::{Agent, Call, Entry, Response, Transcript, Verdict};
use crate::redact::Redactor;

/// The ATIF version whose fields this writes (embedded subagents and `llm_call_count`
/// came in 1.7).
pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

#[derive(Debug, Serialize)]
struct Trajectory {
    schema_version: &'static str,
    session_id: String,
    trajectory_id: String,
    agent: AgentInfo,
    steps: Vec<Step>,
    notes: String,
    final_metrics: FinalMetrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectories: Vec<Trajectory>,
}

#[derive(Debug, Serialize)]
struct AgentInfo {
    name: &'static str,
    version: &'static str,
    model_name: String,
    extra: Value,
}

#[derive(Debug, Default, Serialize)]
struct Step {
    step_id: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    source: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<Metrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm_call_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Value>,
}

#[derive(Debug, Serialize)]
struct ToolCall {
    tool_call_id: String,
    function_name: String,
    arguments: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Value>,
}

#[derive(Debug, Serialize)]
struct Observation {
    results: Vec<ObservationResult>,
}

#[derive(Debug, Serialize)]
struct ObservationResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    source_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subagent_trajectory_ref: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Value>,
}

#[derive(Debug, Serialize)]
struct Metrics {
    prompt_tokens: u64,
    completion_tokens: u64,
    cached_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    extra: Value,
}

#[derive(Debug, Serialize)]
struct FinalMetrics {
    total_prompt_tokens: u64,
    total_completion_tokens: u64,
    total_cached_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cost_usd: Option<f64>,
    total_steps: usize,
    extra: Value,
}

/// The trajectory of `t` as pretty JSON, secrets masked once more.
pub fn render(t: &Transcript, redactor: &Redactor) -> String {
    let root = trajectory(t, 0);
    let mut text = serde_json::to_string_pretty(&root).unwrap_or_default();
    text.push('\n');
    redactor.redact(&text).into_owned()
}

/// The trajectory of the run in `dir`, from its events.jsonl.
pub fn rebuild(dir: &Path, redactor: &Redactor) -> Result<String, EventsError> {
    let events = read_events(&dir.join("events.jsonl"))?;
    Ok(render(&Transcript::of(&events, redactor), redactor))
}

/// The trajectory of one agent (0: the run's), with its subagents embedded.
fn trajectory(t: &Transcript, agent: usize) -> Trajectory {
    let r = &t.result;
    let a = &t.agents[agent];
    let mut steps: Vec<Step> = a.entries.iter().filter_map(|e| step(t, e)).collect();
    if steps.is_empty() {
        steps.push(Step {
            source: "system",
            message: format!(
                "The run ended before the model was asked anything: {}",
                r.reason
            ),
            ..Step::default()
        });
    }
    for (i, s) in steps.iter_mut().enumerate() {
        s.step_id = i + 1;
    }
    let children = t
        .agents
        .iter()
        .enumerate()
        .filter(|(_, sub)| sub.call.is_some_and(|c| t.calls[c].agent == agent))
        .map(|(i, _)| trajectory(t, i))
        .collect();
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: r.session_id.clone(),
        trajectory_id: trajectory_id(t, agent),
        agent: AgentInfo {
            name: "cn-run",
            version: env!("CARGO_PKG_VERSION"),
            model_name: r.model.clone(),
            extra: json!({
                "provider": r.provider,
                "job": r.job,
                "tools": t.runs.last().map(|s| s.tools.clone()).unwrap_or_default(),
                "mode": t.runs.last().map(|s| s.mode.as_str()).unwrap_or_default(),
            }),
        },
        final_metrics: final_metrics(t, a, agent, steps.len()),
        steps,
        notes: notes(agent),
        extra: (agent == 0).then(|| json!({ "run_id": r.run_id, "events_path": r.events_path })),
        subagent_trajectories: children,
    }
}

fn notes(agent: usize) -> String {
    let whose = if agent == 0 {
        "the run"
    } else {
        "a subagent of the run, working for the tool call its parent's observation names"
    };
    format!(
        "Written by cn-run from events.jsonl: {whose}. Tool results are whole, with secrets \
         masked. `prompt_tokens` is the whole prompt, cache reads included."
    )
}

fn trajectory_id(t: &Transcript, agent: usize) -> String {
    match &t.agents[agent].parent {
        None => t.result.run_id.clone(),
        Some(call) => format!("{}/{call}", t.result.run_id),
    }
}

fn final_metrics(t: &Transcript, a: &Agent, agent: usize, steps: usize) -> FinalMetrics {
    let r = &t.result;
    if agent != 0 {
        return FinalMetrics {
            total_prompt_tokens: a.usage.input_tokens,
            total_completion_tokens: a.usage.output_tokens,
            total_cached_tokens: a.usage.cache_read_tokens,
            total_cost_usd: a.cost.known(),
            total_steps: steps,
            extra: json!({ "responses": a.responses }),
        };
    }
    FinalMetrics {
        total_prompt_tokens: r.usage.input_tokens,
        total_completion_tokens: r.usage.output_tokens,
        total_cached_tokens: r.usage.cache_read_tokens,
        total_cost_usd: r.total_cost_usd,
        total_steps: steps,
        extra: json!({
            "status": r.status.as_str(),
            "exit_code": r.exit_code,
            "reason": r.reason,
            "subtype": r.subtype,
            "limit": r.limit.map(|l| l.as_str()),
            "num_turns": r.num_turns,
            "num_tool_calls": r.num_tool_calls,
            "duration_ms": r.duration_ms,
            "cache_creation_tokens": r.usage.cache_write_tokens,
            "checks": r.checks,
            "final_answer": r.result,
        }),
    }
}

/// The step an entry is (none for entries a trajectory does not carry).
fn step(t: &Transcript, e: &Entry) -> Option<Step> {
    let system = |message: String, extra: Value| Step {
        source: "system",
        message,
        extra: Some(extra),
        ..Step::default()
    };
    match e {
        Entry::User { ts, text, .. } => Some(Step {
            timestamp: Some(ts.clone()),
            source: "user",
            message: text.clone(),
            ..Step::default()
        }),
        Entry::Response(r) => Some(response(t, r)),
        Entry::Run(i) => t.runs.get(*i).filter(|r| r.resumed).map(|r| Step {
            timestamp: Some(r.ts.clone()),
            ..system(
                "The run was resumed from its session.".to_owned(),
                json!({ "resumed": true }),
            )
        }),
        Entry::Check(c) => Some(Step {
            observation: Some(Observation {
                results: vec![ObservationResult {
                    source_call_id: None,
                    content: Some(c.output_tail.clone()),
                    subagent_trajectory_ref: None,
                    extra: None,
                }],
            }),
            ..system(
                format!(
                    "Check `{}` (attempt {}): {}.",
                    c.name,
                    c.attempt,
                    if c.passed { "passed" } else { "failed" }
                ),
                json!({ "check": c }),
            )
        }),
        Entry::Compaction {
            tokens_before,
            tokens_after,
            summary,
            ..
        } => Some(system(
            format!("The history was compacted from {tokens_before} to {tokens_after} tokens."),
            json!({ "summary": summary }),
        )),
        Entry::Turn(_)
        | Entry::Attempt(_)
        | Entry::Retry { .. }
        | Entry::Incomplete { .. }
        | Entry::Validated { .. }
        | Entry::Rule { .. }
        | Entry::Warning(_) => None,
    }
}

fn response(t: &Transcript, r: &Response) -> Step {
    let calls: Vec<&Call> = r.calls.iter().filter_map(|&c| t.calls.get(c)).collect();
    let results: Vec<ObservationResult> = r
        .calls
        .iter()
        .filter_map(|&c| t.calls.get(c).map(|call| observed(t, c, call)))
        .collect();
    Step {
        timestamp: Some(r.ts.clone()),
        source: "agent",
        message: r.text.clone(),
        reasoning_content: (!r.reasoning.is_empty()).then(|| r.reasoning.clone()),
        tool_calls: (!calls.is_empty()).then(|| calls.iter().map(|c| tool_call(c)).collect()),
        observation: (!results.is_empty()).then_some(Observation { results }),
        metrics: r.usage.map(|u| Metrics {
            prompt_tokens: u.input_tokens,
            completion_tokens: u.output_tokens,
            cached_tokens: u.cache_read_tokens,
            cost_usd: r.cost,
            extra: json!({ "cache_creation_tokens": u.cache_write_tokens }),
        }),
        llm_call_count: Some(1),
        extra: r
            .stop_reason
            .as_ref()
            .map(|s| json!({ "stop_reason": s, "turn": r.turn })),
        ..Step::default()
    }
}

fn tool_call(c: &Call) -> ToolCall {
    let parsed = c
        .arguments
        .clone()
        .or_else(|| serde_json::from_str(&c.raw_arguments).ok());
    let (arguments, extra) = match parsed {
        Some(v @ Value::Object(_)) => (v, None),
        _ => (json!({}), Some(json!({ "raw_arguments": c.raw_arguments }))),
    };
    ToolCall {
        tool_call_id: c.id.clone(),
        function_name: c.name.clone(),
        arguments,
        extra,
    }
}

/// A call's result, with its verdict, and the subagent that worked for it.
fn observed(t: &Transcript, index: usize, c: &Call) -> ObservationResult {
    let verdict = match &c.verdict {
        Verdict::Allowed(d) => json!({ "resolution": "allowed", "decision": d }),
        Verdict::Decided {
            resolution,
            decision,
        } => {
            json!({ "resolution": resolution, "decision": decision })
        }
        Verdict::NotRun => json!({ "resolution": "not_run" }),
    };
    let subagent = c.subagent.map(|a| {
        vec![json!({ "trajectory_id": trajectory_id(t, a), "session_id": t.result.session_id })]
    });
    let checkpoint = c.checkpoint.and_then(|k| t.checkpoints.get(k));
    ObservationResult {
        source_call_id: Some(c.id.clone()),
        content: c.output.clone(),
        subagent_trajectory_ref: subagent,
        extra: Some(json!({
            "verdict": verdict,
            "status": c.status,
            "is_error": c.is_error,
            "duration_ms": c.duration_ms,
            "checkpoint": checkpoint.map(|k| json!({ "index": k.index, "commit": k.commit, "ref": k.reference })),
            "call": index + 1,
        })),
    }
}

#[cfg(test)]
#[path = "atif_tests.rs"]
mod tests;
