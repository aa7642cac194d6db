//! What a resumed run continues from, read from its session and its events.jsonl: whether
//! it may go on without a new instruction (it stopped at a limit, on a signal, a crash or
//! a provider outage — not when its agent had finished), the phase it stopped in (the
//! agent's loop, or the checks after the final answer, or the outputs after them), the
//! attempt and the checks already run in it, and the tools' state as the earlier process
//! left it (files read, background jobs, the checklist).

use std::collections::HashMap;
use std::path::Path;

use crate::checks::CheckResult;
use crate::conversation::Message;
use crate::events::{Envelope, Event, ToolStatus};
use crate::exit_code::Status;
use crate::session::Session;
use crate::tools::ToolShared;

/// Where a resumed run picks up after the agent's loop.
#[derive(Debug, Default, Clone)]
pub(crate) struct Continuation {
    /// The agent had given its final answer (the process stopped in its checks or while
    /// writing its outputs): the run goes on from the checks; the model is not asked again.
    pub answered: bool,
    /// The attempt the run was in (0 for a new run or a new instruction: the first).
    pub attempt: u32,
    /// Checks of that attempt that ran to their end after the final answer.
    pub checks_done: Vec<CheckResult>,
}

/// A run folder's events as far as they can be read (none when they cannot).
pub(crate) fn events_of(dir: &Path) -> Vec<Envelope> {
    let path = dir.join("events.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    crate::report::rebuild::parse_events_noting(&path, &text)
        .map(|(events, _)| events)
        .unwrap_or_default()
}

/// Whether a finished run may go on without a new instruction: its last process stopped
/// at a limit, on a signal, the provider or the environment, or before it reported how it
/// ended. A run whose agent finished (success, or failed) needs a new instruction.
pub(crate) fn continues_unasked(session: &Session, events: &[Envelope]) -> bool {
    if events.is_empty() {
        return !matches!(session.status.as_deref(), Some("success" | "failed"));
    }
    let last = events
        .iter()
        .rev()
        .take_while(|e| !matches!(e.event, Event::RunStarted { .. }))
        .find_map(|e| match &e.event {
            Event::RunCompleted { status, .. } => Some(*status),
            _ => None,
        });
    !matches!(last, Some(Status::Success | Status::Failed))
}

/// The phase and checks a resumed run continues from; `instructed` when it is given a new
/// instruction (then the agent works on it, and the attempts start again).
pub(crate) fn continuation(
    session: &Session,
    events: &[Envelope],
    instructed: bool,
) -> Continuation {
    if instructed {
        return Continuation::default();
    }
    let (attempt, done) = checks_so_far(events);
    let answered = session.in_flight.is_empty() && last_is_answer(&session.history);
    Continuation {
        answered,
        attempt,
        checks_done: if answered { done } else { Vec::new() },
    }
}

/// The attempt the events were in last, and the checks that ran to their end in it after
/// the last answer of the main agent.
fn checks_so_far(events: &[Envelope]) -> (u32, Vec<CheckResult>) {
    let mut attempt = 0;
    let mut done: Vec<CheckResult> = Vec::new();
    for e in events.iter().filter(|e| e.parent_call_id.is_none()) {
        match &e.event {
            Event::AttemptStarted { attempt: a } => {
                attempt = *a;
                done.clear();
            }
            Event::MessageAppended {
                message: Message::Assistant { .. },
            } => done.clear(),
            Event::CheckFinished(c) => {
                attempt = c.attempt;
                done.retain(|d| d.name != c.name || d.attempt != c.attempt);
                if !c.interrupted {
                    done.push(c.clone());
                }
            }
            _ => {}
        }
    }
    done.retain(|d| d.attempt == attempt);
    (attempt, done)
}

/// Whether the conversation ends with the agent's final answer (no calls).
fn last_is_answer(history: &[Message]) -> bool {
    matches!(history.last(), Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty())
}

/// The answer a run that had answered gives again (its checks are what is left to do).
pub(crate) fn last_answer(history: &[Message]) -> String {
    match history.last() {
        Some(m @ Message::Assistant { .. }) => m.text().to_owned(),
        _ => String::new(),
    }
}

/// One call of the main agent that ended well: its tool, arguments, result and when it
/// started (from the events, when they say).
struct DoneCall {
    tool: String,
    args: serde_json::Value,
    result: String,
    at: Option<String>,
}

/// A call: its tool, its arguments, when it started (when the events say).
type Call = (String, serde_json::Value, Option<String>);

/// The calls that ended well, from the history and the events (the events also hold the
/// calls a compaction took out of the history).
fn done_calls(history: &[Message], events: &[Envelope]) -> Vec<DoneCall> {
    let mut calls: HashMap<String, Call> = HashMap::new();
    let mut order = Vec::new();
    let mut results: HashMap<String, String> = HashMap::new();
    calls_in_events(events, &mut calls, &mut order, &mut results);
    for m in history {
        match m {
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    let args = serde_json::from_str(&c.arguments).unwrap_or_default();
                    let at = if let Some(known) = calls.get(&c.id) {
                        known.2.clone()
                    } else {
                        order.push(c.id.clone());
                        None
                    };
                    calls.insert(c.id.clone(), (c.name.clone(), args, at));
                }
            }
            Message::Tool {
                tool_call_id,
                content,
                is_error: false,
                ..
            } => {
                results.insert(tool_call_id.clone(), content.clone());
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter_map(|id| {
            let result = results.remove(&id)?;
            let (tool, args, at) = calls.remove(&id)?;
            Some(DoneCall {
                tool,
                args,
                result,
                at,
            })
        })
        .collect()
}

/// The main agent's calls and the results of those that ended well, from the events.
fn calls_in_events(
    events: &[Envelope],
    calls: &mut HashMap<String, Call>,
    order: &mut Vec<String>,
    results: &mut HashMap<String, String>,
) {
    for e in events.iter().filter(|e| e.parent_call_id.is_none()) {
        match &e.event {
            Event::ToolStarted {
                call_id,
                tool,
                arguments,
                ..
            } => {
                order.push(call_id.clone());
                let call = (tool.clone(), arguments.clone(), Some(e.ts.clone()));
                calls.insert(call_id.clone(), call);
            }
            Event::ToolFinished {
                call_id,
                status: ToolStatus::Ok,
                output,
                ..
            } => {
                results.insert(call_id.clone(), output.clone());
            }
            _ => {}
        }
    }
}

/// The tools' state as the earlier processes of the run left it: the files the model read
/// or created (Edit needs a Read first), the background jobs it started (their ids stay
/// taken; each is reported as ended with the process that ran it), its checklist.
pub(crate) fn restore_tools(shared: &ToolShared, history: &[Message], events: &[Envelope]) {
    let mut jobs = Vec::new();
    for call in done_calls(history, events) {
        let arg = |key: &str| {
            call.args
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        match call.tool.as_str() {
            "Read" | "Edit" | "MultiEdit" => {
                let key = if call.tool == "Read" {
                    "filepath"
                } else {
                    "file_path"
                };
                if let Some(raw) = arg(key) {
                    shared.mark_read(
                        crate::tools::resolve_in_workspace(&shared.workspace, &raw).real,
                    );
                }
            }
            "Write" if call.result.starts_with("Created ") => {
                if let Some(raw) = arg("filepath") {
                    shared.mark_read(
                        crate::tools::resolve_in_workspace(&shared.workspace, &raw).real,
                    );
                }
            }
            "Checklist" => {
                if let Some(list) = arg("checklist") {
                    shared.set_checklist(list);
                }
            }
            "Bash" => {
                if let (Some(id), Some(command)) = (background_id(&call.result), arg("command")) {
                    let at = call.at.as_deref().and_then(|t| t.parse().ok());
                    jobs.push((id, command, at));
                }
            }
            _ => {}
        }
    }
    shared.background().restore(&jobs);
}

/// The job id a Bash call that started a background job answered with.
fn background_id(result: &str) -> Option<String> {
    let rest = result.strip_prefix("Started background job ")?;
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
#[path = "continuation_tests.rs"]
mod tests;
