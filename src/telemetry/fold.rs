//! A run's telemetry as a fold over its events, like result.json and the session log: each
//! envelope (on the telemetry thread, never the run's) becomes finished spans with the real
//! start and end times of the events, log records and measurements. Span ids are derived
//! ([`RunTrace::span_id`]), so children are exported as they end and the agent span last.
//!
//! The tree: `invoke_agent {job}` (under the caller's `TRACEPARENT` span) holds a
//! `chat {model}` span per model request, an `execute_tool {tool}` span per tool call (with a
//! `bash` command span under Bash calls and a `tools/call {tool}` span under MCP calls, whose
//! id the server was given as its parent), a `check {name}` span per check and a
//! `checkpoint` span per snapshot. A subagent's calls sit under its own `invoke_agent` span,
//! under the Subagent call.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::SpanId;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::SpanData;

use super::context::RunTrace;
use super::logs::{LogItem, log_item};
use super::metrics::Measure;
use super::spans::{SpanSpec, Texts, scope};
use crate::events::{Envelope, Event};

#[path = "fold_agent.rs"]
mod agent;
#[path = "fold_chat.rs"]
mod chat;
#[path = "fold_tools.rs"]
mod tools;
#[path = "fold_work.rs"]
mod work;

/// A span event on the agent span: its name and the key of its one attribute.
type Note = (&'static str, &'static str);
const ATTEMPT: Note = ("cn_run.attempt.started", "cn_run.attempt");
const INCOMPLETE: Note = ("cn_run.output.incomplete", "gen_ai.response.finish_reasons");
const COMPACTION: Note = ("cn_run.compaction", "cn_run.tokens_before");
const RULE: Note = ("cn_run.rule.applied", "cn_run.rule");
const WARNING: Note = ("cn_run.warning", "cn_run.message");
const VALIDATED: Note = ("cn_run.output.validated", "cn_run.valid");
const ARTIFACT: Note = ("cn_run.artifact.collected", "cn_run.artifact");
const UPLOAD: Note = ("cn_run.upload.finished", "cn_run.upload.target");
const HOOK: Note = ("cn_run.hook.ran", "cn_run.hook.event");

/// What the fold makes of one event.
#[derive(Debug)]
pub enum Out {
    Span(Box<SpanData>),
    Log(Box<LogItem>),
    Measure(Measure),
}

/// The fold of one run's events.
pub struct RunFold {
    trace: RunTrace,
    texts: Texts,
    scope: InstrumentationScope,
    /// When cn-run started (for the time to the first request).
    process_start: Option<SystemTime>,
    out: Vec<Out>,
    /// The run's own agent (`""`) and each subagent, by the call that started it.
    agents: HashMap<String, agent::Agent>,
    /// Model requests in flight, by agent and turn.
    chats: HashMap<(String, u32), chat::Chat>,
    calls: tools::Calls,
    /// MCP servers by name, with their transport (`pipe`, `tcp`).
    mcp: Vec<(String, &'static str)>,
    first_request: bool,
    /// The time of the last event, and of the one before it.
    last: SystemTime,
    prev: SystemTime,
    run_id: String,
    completed: bool,
}

impl RunFold {
    pub fn new(trace: RunTrace, texts: Texts, process_start: Option<SystemTime>) -> Self {
        RunFold {
            trace,
            texts,
            scope: scope(),
            process_start,
            out: Vec::new(),
            agents: HashMap::new(),
            chats: HashMap::new(),
            calls: tools::Calls::default(),
            mcp: Vec::new(),
            first_request: false,
            last: SystemTime::UNIX_EPOCH,
            prev: SystemTime::UNIX_EPOCH,
            run_id: String::new(),
            completed: false,
        }
    }

    /// The run's trace.
    pub fn trace(&self) -> &RunTrace {
        &self.trace
    }

    /// Fold one event; returns what it completed.
    pub fn on_event(&mut self, env: &Envelope) -> Vec<Out> {
        let at = time_of(&env.ts).unwrap_or(self.last).max(self.last);
        self.prev = self.last;
        self.last = at;
        if self.run_id.is_empty() {
            self.run_id = env.run_id.clone();
        }
        let scope = env.parent_call_id.clone().unwrap_or_default();
        let span = self.apply(&scope, at, &env.event);
        if let Some(item) = log_item(env, at, span, &self.texts) {
            self.out.push(Out::Log(Box::new(item)));
        }
        std::mem::take(&mut self.out)
    }

    /// The end of the process: a run that never completed has its open spans closed at its
    /// last event, as a run that did not finish.
    pub fn finish(&mut self) -> Vec<Out> {
        if !self.completed && self.agents.contains_key("") {
            let why = "the run did not finish (cn-run stopped before run.completed)";
            self.close_all(self.last, "internal_error", why);
            self.end_agent("", self.last, Some(("internal_error", why.to_owned())));
        }
        std::mem::take(&mut self.out)
    }

    /// The event's effect; returns the span its log record belongs to.
    fn apply(&mut self, scope: &str, at: SystemTime, event: &Event) -> SpanId {
        match event {
            Event::RunStarted { .. } => self.run_started(at, event),
            Event::AttemptStarted { attempt } => {
                self.note(scope, at, ATTEMPT, &attempt.to_string())
            }
            Event::TurnStarted { turn } => self.turn_started(scope, *turn, at),
            Event::ModelRetry { .. } => self.model_retry(scope, at, event),
            Event::AssistantMessage { .. } => self.assistant_message(scope, at, event),
            Event::OutputIncomplete { stop_reason, .. } => {
                self.note(scope, at, INCOMPLETE, stop_reason)
            }
            Event::Compaction { tokens_before, .. } => {
                self.note(scope, at, COMPACTION, &tokens_before.to_string())
            }
            Event::RuleApplied { name, .. } => self.note(scope, at, RULE, name),
            Event::Warning { message } => self.note(scope, at, WARNING, message),
            Event::OutputValidated { valid, .. } => {
                self.note(scope, at, VALIDATED, &valid.to_string())
            }
            Event::ArtifactCollected(a) => self.note(scope, at, ARTIFACT, &a.path),
            Event::UploadFinished { target, .. } => self.note(scope, at, UPLOAD, target.as_str()),
            Event::HookRan { hook_event, .. } => self.note(scope, at, HOOK, hook_event.as_str()),
            Event::PermissionDecision { .. } => self.decision(scope, at, event),
            Event::ToolStarted { .. } => self.tool_started(scope, at, event),
            Event::ToolFinished { .. } => self.tool_finished(scope, at, event),
            Event::MessageAppended { message } => self.message_appended(scope, at, message),
            Event::TurnCompleted { .. }
            | Event::ConfigResolved { .. }
            | Event::HistoryReplaced { .. }
            | Event::SessionFinished { .. }
            | Event::McpNotification { .. }
            | Event::SandboxEstablished { .. } => self.agent_span(scope),
            Event::CheckpointCreated { .. } => self.checkpoint(at, event),
            Event::CheckFinished(check) => self.check(at, check),
            Event::McpServer(status) => self.mcp_server(status),
            Event::ChangesRecorded(changes) => self.changes(changes),
            Event::RunCompleted { .. } => self.run_completed(at, event),
        }
    }

    /// The id of the agent span of `scope` (`""`: the run's own).
    fn agent_span(&self, scope: &str) -> SpanId {
        self.trace.span_id("agent", scope)
    }

    fn push_span(&mut self, spec: SpanSpec) {
        if self.trace.sampled() {
            let data = spec.build(&self.trace, &self.scope);
            self.out.push(Out::Span(Box::new(data)));
        }
    }

    fn measure(&mut self, m: Measure) {
        self.out.push(Out::Measure(m));
    }

    /// The job's name as a metric attribute (every run-level metric has it).
    fn job_attr(&self) -> KeyValue {
        let job = self
            .agents
            .get("")
            .map(|a| a.name.clone())
            .unwrap_or_default();
        KeyValue::new("cn_run.job", job)
    }
}

/// A value's word in events.jsonl (`job`, `cli`, …: its serde name).
pub(super) fn word(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// An RFC 3339 timestamp of events.jsonl as a time.
pub(super) fn time_of(ts: &str) -> Option<SystemTime> {
    let nanos = ts.parse::<jiff::Timestamp>().ok()?.as_nanosecond();
    let nanos = u64::try_from(nanos).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos))
}

/// Seconds between two times (0 when `end` comes first).
pub(super) fn seconds(start: SystemTime, end: SystemTime) -> f64 {
    end.duration_since(start)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
