//! The fold's record of the run's other work: a `check {name}` span per check, a
//! `checkpoint` span per snapshot (from the end of the call that caused it), the lines the
//! run changed, and the MCP servers it started.

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, SpanKind};

use super::RunFold;
use crate::events::Event;
use crate::telemetry::metrics::{Measure, Metric};
use crate::telemetry::spans::SpanSpec;

impl RunFold {
    pub(super) fn check(&mut self, at: SystemTime, c: &crate::checks::CheckResult) -> SpanId {
        let start = at
            .checked_sub(Duration::from_millis(c.duration_ms))
            .unwrap_or(at);
        let id = self
            .trace
            .span_id("check", &format!("{}/{}", c.attempt, c.name));
        let mut spec = SpanSpec::new(
            id,
            self.agent_span(""),
            format!("check {}", c.name),
            SpanKind::Internal,
        )
        .at(start, at);
        let result = if c.passed { "passed" } else { "failed" };
        spec.attributes = vec![
            KeyValue::new("cn_run.check.name", self.texts.value(&c.name)),
            KeyValue::new("cn_run.check.attempt", i64::from(c.attempt)),
            KeyValue::new("cn_run.check.result", result),
            KeyValue::new("cn_run.check.timed_out", c.timed_out),
        ];
        if let Some(code) = c.exit_code {
            spec.attributes
                .push(KeyValue::new("process.exit.code", i64::from(code)));
        }
        spec.attributes
            .extend(self.texts.content("cn_run.check.output", &c.output_tail));
        if !c.passed {
            let kind = if c.timed_out {
                "timeout"
            } else {
                "check_failed"
            };
            spec.attributes.push(KeyValue::new("error.type", kind));
            spec.error = Some(format!("check {} failed", self.texts.clean(&c.name)));
        }
        self.started_under("", start);
        self.push_span(spec);
        let attrs = vec![
            self.job_attr(),
            KeyValue::new("cn_run.check.name", self.texts.value(&c.name)),
            KeyValue::new("cn_run.check.result", result),
        ];
        self.measure(Measure::new(Metric::Checks, 1.0, attrs));
        id
    }

    pub(super) fn changes(&mut self, changes: &crate::events::Changes) -> SpanId {
        if let Some(diff) = &changes.diff {
            for (kind, n) in [("added", diff.insertions), ("removed", diff.deletions)] {
                let attrs = vec![self.job_attr(), KeyValue::new("type", kind)];
                self.measure(Measure::new(Metric::LinesChanged, n as f64, attrs));
            }
            if let Some(agent) = self.agents.get_mut("") {
                agent.attributes.extend([
                    KeyValue::new("cn_run.diff.files", diff.files as i64),
                    KeyValue::new("cn_run.diff.insertions", diff.insertions as i64),
                    KeyValue::new("cn_run.diff.deletions", diff.deletions as i64),
                ]);
            }
        }
        self.agent_span("")
    }

    pub(super) fn checkpoint(&mut self, at: SystemTime, e: &Event) -> SpanId {
        let Event::CheckpointCreated {
            index,
            commit,
            call_id,
            label,
            files_changed,
            ..
        } = e
        else {
            return self.agent_span("");
        };
        let start = call_id
            .as_ref()
            .and_then(|c| self.calls.ended_at(c))
            .unwrap_or(self.prev);
        let id = self.trace.span_id("checkpoint", &index.to_string());
        let mut spec = SpanSpec::new(
            id,
            self.agent_span(""),
            "checkpoint".to_owned(),
            SpanKind::Internal,
        )
        .at(start, at);
        spec.attributes = vec![
            KeyValue::new("cn_run.checkpoint.index", i64::from(*index)),
            KeyValue::new("cn_run.checkpoint.commit", commit.clone()),
            KeyValue::new("cn_run.checkpoint.label", self.texts.value(label)),
            KeyValue::new("cn_run.checkpoint.files_changed", *files_changed as i64),
        ];
        if let Some(call) = call_id {
            spec.attributes
                .push(KeyValue::new("gen_ai.tool.call.id", call.clone()));
        }
        self.started_under("", start);
        self.push_span(spec);
        id
    }

    pub(super) fn mcp_server(&mut self, s: &crate::mcp::ServerStatus) -> SpanId {
        let transport = match s.transport {
            crate::mcp::TransportKind::Stdio => "pipe",
            crate::mcp::TransportKind::Http => "tcp",
        };
        self.mcp.push((s.name.clone(), transport));
        let attrs = vec![
            self.job_attr(),
            KeyValue::new("cn_run.mcp.server", s.name.clone()),
            KeyValue::new("cn_run.mcp.status", s.status.as_str()),
            KeyValue::new("network.transport", transport),
        ];
        self.measure(Measure::new(Metric::McpConnections, 1.0, attrs));
        self.agent_span("")
    }
}
