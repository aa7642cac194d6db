//! The log signal: each event of events.jsonl as an OpenTelemetry log record named
//! `cn_run.<type>` (`cn_run.tool.finished`, …), its fields as attributes, tied to the span it
//! belongs to. The fields that hold content (the prompt, answers, tool arguments and output,
//! check output) are left out unless content is captured; every text is redacted and capped.

use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::logs::Severity;
use opentelemetry::trace::SpanId;
use serde_json::Value;

use super::spans::Texts;
use crate::events::{Envelope, Event};

/// One log record as the fold makes it.
#[derive(Debug, Clone)]
pub struct LogItem {
    pub time: SystemTime,
    /// `cn_run.` and the event's type.
    pub name: &'static str,
    pub severity: Severity,
    pub attributes: Vec<KeyValue>,
    /// The span the event belongs to.
    pub span: SpanId,
}

/// An event's record: its name, severity and the fields that are content; `None` for
/// events that are not logged (the conversation's messages are the session's, not
/// telemetry's).
fn shape(event: &Event) -> Option<(&'static str, Severity, &'static [&'static str])> {
    let (info, warn) = (Severity::Info, Severity::Warn);
    let failed = |s: &crate::exit_code::Status| *s != crate::exit_code::Status::Success;
    Some(match event {
        Event::RunStarted { .. } => ("cn_run.run.started", info, &["prompt"]),
        Event::AttemptStarted { .. } => ("cn_run.attempt.started", info, &[]),
        Event::TurnStarted { .. } => ("cn_run.turn.started", info, &[]),
        Event::ModelRetry { .. } => ("cn_run.model.retry", warn, &[]),
        Event::AssistantMessage { .. } => {
            ("cn_run.assistant.message", info, &["text", "tool_calls"])
        }
        Event::OutputIncomplete { .. } => ("cn_run.output.incomplete", warn, &[]),
        Event::PermissionDecision { .. } => ("cn_run.permission.decision", info, &["arguments"]),
        Event::HookRan { .. } => ("cn_run.hook.ran", info, &["stderr", "reason"]),
        Event::ToolStarted { .. } => ("cn_run.tool.started", info, &["arguments"]),
        Event::ToolFinished { .. } => ("cn_run.tool.finished", info, &["output"]),
        Event::TurnCompleted { .. } => ("cn_run.turn.completed", info, &[]),
        Event::Compaction { .. } => ("cn_run.compaction", info, &[]),
        Event::CheckpointCreated { .. } => ("cn_run.checkpoint.created", info, &[]),
        Event::CheckFinished(c) => {
            let severity = if c.passed { info } else { warn };
            ("cn_run.check.finished", severity, &["output_tail"])
        }
        Event::OutputValidated { .. } => ("cn_run.output.validated", info, &["value", "errors"]),
        Event::ArtifactCollected(_) => ("cn_run.artifact.collected", info, &[]),
        Event::UploadFinished { .. } => ("cn_run.upload.finished", info, &[]),
        Event::McpServer(_) => ("cn_run.mcp.server", info, &[]),
        Event::ChangesRecorded(_) => ("cn_run.changes.recorded", info, &[]),
        Event::McpNotification { .. } => ("cn_run.mcp.notification", info, &["message"]),
        Event::RuleApplied { .. } => ("cn_run.rule.applied", info, &[]),
        Event::Warning { .. } => ("cn_run.warning", warn, &[]),
        Event::SandboxEstablished { .. } => ("cn_run.sandbox.established", info, &[]),
        Event::SessionFinished { .. } => ("cn_run.session.finished", info, &["checklist"]),
        Event::RunCompleted { status, .. } => {
            let severity = if failed(status) { warn } else { info };
            ("cn_run.run.completed", severity, &["result", "checklist"])
        }
        crate::events::ignored!(conversation) => return None,
    })
}

/// The log record of `env` (at `at`, in span `span`), if its event is logged.
pub(super) fn log_item(
    env: &Envelope,
    at: SystemTime,
    span: SpanId,
    texts: &Texts,
) -> Option<LogItem> {
    let (name, severity, content) = shape(&env.event)?;
    let mut attributes = vec![
        KeyValue::new("cn_run.run.id", env.run_id.clone()),
        KeyValue::new("cn_run.seq", env.seq as i64),
    ];
    if let Some(parent) = &env.parent_call_id {
        attributes.push(KeyValue::new("cn_run.parent_call_id", parent.clone()));
    }
    let fields = match serde_json::to_value(&env.event) {
        Ok(Value::Object(fields)) => fields,
        Ok(other) => [("value".to_owned(), other)].into_iter().collect(),
        Err(_) => serde_json::Map::new(),
    };
    for (key, value) in fields {
        if key == "type" || (content.contains(&key.as_str()) && !texts.capture) {
            continue;
        }
        let key = format!("cn_run.{key}");
        let value = match value {
            Value::Null => continue,
            Value::Bool(b) => b.into(),
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                None => n.as_f64().unwrap_or_default().into(),
            },
            Value::String(s) => texts.value(&s),
            other => texts.value(&other.to_string()),
        };
        attributes.push(KeyValue::new(key, value));
    }
    Some(LogItem {
        time: at,
        name,
        severity,
        attributes,
        span,
    })
}
