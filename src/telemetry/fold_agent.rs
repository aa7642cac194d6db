//! The fold's agent side: the `invoke_agent` spans (the run's and each subagent's), the
//! `chat` spans of model requests with their token and duration metrics, the run's end
//! and the spans of checks and checkpoints.

use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanId, SpanKind};
use opentelemetry::{KeyValue, Value};
use serde_json::json;

use super::{RunFold, seconds};
use crate::events::Event;
use crate::telemetry::metrics::{Measure, Metric};
use crate::telemetry::spans::{SpanSpec, event};

/// An agent span while it is open.
pub(in crate::telemetry) struct Agent {
    pub name: String,
    pub start: SystemTime,
    /// The earliest start of anything under it (MCP servers start before `run.started`).
    pub earliest: SystemTime,
    pub model: String,
    pub provider: String,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<opentelemetry::trace::Event>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A model request while it is in flight.
pub(in crate::telemetry) struct Chat {
    pub start: SystemTime,
    pub events: Vec<opentelemetry::trace::Event>,
}

/// `gen_ai.provider.name` of cn-run's provider names.
fn provider_name(provider: &str) -> String {
    match provider {
        "azure" => "azure.ai.openai".to_owned(),
        "script" => "cn_run.script".to_owned(),
        other => other.to_owned(),
    }
}

/// A status as its word in result.json (`limit_reached`, …).
fn status_word(status: crate::exit_code::Status) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl RunFold {
    pub(super) fn run_started(&mut self, at: SystemTime, event: &Event) -> SpanId {
        let Event::RunStarted {
            job,
            prompt,
            provider,
            model,
            mode,
            resumed,
            ..
        } = event
        else {
            return self.agent_span("");
        };
        let run_id = self.run_id.clone();
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "invoke_agent"),
            KeyValue::new("gen_ai.agent.name", job.clone()),
            KeyValue::new("gen_ai.agent.id", run_id.clone()),
            KeyValue::new("gen_ai.conversation.id", run_id.clone()),
            KeyValue::new("gen_ai.provider.name", provider_name(provider)),
            KeyValue::new("gen_ai.request.model", model.clone()),
            KeyValue::new("cn_run.run.id", run_id),
            KeyValue::new("cn_run.job", job.clone()),
            KeyValue::new("cn_run.mode", mode.clone()),
            KeyValue::new("cn_run.resumed", *resumed),
        ];
        let input = json!([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]);
        attributes.extend(
            self.texts
                .content("gen_ai.input.messages", &input.to_string()),
        );
        let earliest = self.agents.get("").map_or(at, |a| a.earliest.min(at));
        self.agents.insert(
            String::new(),
            Agent {
                name: job.clone(),
                start: at,
                earliest,
                model: model.clone(),
                provider: provider_name(provider),
                attributes,
                events: Vec::new(),
                input_tokens: 0,
                output_tokens: 0,
            },
        );
        self.agent_span("")
    }

    /// The agent of `scope`, made when a subagent's first event comes.
    pub(super) fn agent_mut(&mut self, scope: &str, at: SystemTime) -> &mut Agent {
        if !self.agents.contains_key(scope) {
            let (model, provider) = self
                .agents
                .get("")
                .map(|a| (a.model.clone(), a.provider.clone()))
                .unwrap_or_default();
            let name = self.calls.subagent_name(scope);
            let attributes = vec![
                KeyValue::new("gen_ai.operation.name", "invoke_agent"),
                KeyValue::new("gen_ai.agent.name", name.clone()),
                KeyValue::new("gen_ai.agent.id", format!("{}/{scope}", self.run_id)),
                KeyValue::new("gen_ai.provider.name", provider.clone()),
                KeyValue::new("gen_ai.request.model", model.clone()),
            ];
            let agent = Agent {
                name,
                start: at,
                earliest: at,
                model,
                provider,
                attributes,
                events: Vec::new(),
                input_tokens: 0,
                output_tokens: 0,
            };
            self.agents.insert(scope.to_owned(), agent);
        }
        let agent = self.agents.get_mut(scope);
        // Inserted above when missing.
        agent.unwrap_or_else(|| unreachable!("agent {scope} was just inserted"))
    }

    /// Something under the agent of `scope` started at `at`.
    pub(super) fn started_under(&mut self, scope: &str, at: SystemTime) {
        if let Some(a) = self.agents.get_mut(scope) {
            a.earliest = a.earliest.min(at);
        }
    }

    /// A span event on the agent span of `scope`.
    pub(super) fn agent_event(
        &mut self,
        scope: &str,
        name: &'static str,
        at: SystemTime,
        attributes: Vec<KeyValue>,
    ) -> SpanId {
        self.agent_mut(scope, at)
            .events
            .push(event(name, at, attributes));
        self.agent_span(scope)
    }

    /// Events that become a span event of their agent (compaction, warnings, …).
    pub(super) fn noted(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let (name, attributes) = match e {
            Event::OutputIncomplete {
                stop_reason,
                action,
                ..
            } => (
                "cn_run.output.incomplete",
                vec![
                    KeyValue::new("gen_ai.response.finish_reasons", stop_reason.clone()),
                    KeyValue::new("cn_run.action", action.clone()),
                ],
            ),
            Event::Compaction {
                tokens_before,
                tokens_after,
                ..
            } => (
                "cn_run.compaction",
                vec![
                    KeyValue::new("cn_run.tokens_before", *tokens_before as i64),
                    KeyValue::new("cn_run.tokens_after", *tokens_after as i64),
                ],
            ),
            Event::RuleApplied { name, .. } => (
                "cn_run.rule.applied",
                vec![KeyValue::new("cn_run.rule", self.texts.value(name))],
            ),
            Event::Warning { message } => (
                "cn_run.warning",
                vec![KeyValue::new("cn_run.message", self.texts.value(message))],
            ),
            Event::OutputValidated { valid, .. } => (
                "cn_run.output.validated",
                vec![KeyValue::new("cn_run.valid", *valid)],
            ),
            Event::ArtifactCollected(a) => (
                "cn_run.artifact.collected",
                vec![KeyValue::new("cn_run.artifact", self.texts.value(&a.path))],
            ),
            Event::UploadFinished { target, ok, .. } => (
                "cn_run.upload.finished",
                vec![
                    KeyValue::new("cn_run.upload.target", target.clone()),
                    KeyValue::new("cn_run.upload.ok", *ok),
                ],
            ),
            _ => ("cn_run.event", Vec::new()),
        };
        self.agent_event(scope, name, at, attributes)
    }

    pub(super) fn turn_started(&mut self, scope: &str, turn: u32, at: SystemTime) -> SpanId {
        self.agent_mut(scope, at);
        if scope.is_empty() && !self.first_request {
            self.first_request = true;
            let start = self.process_start.unwrap_or(at);
            let attrs = vec![self.job_attr()];
            self.measure(Measure::new(
                Metric::TimeToFirstRequest,
                seconds(start, at),
                attrs,
            ));
        }
        let chat = Chat {
            start: at,
            events: Vec::new(),
        };
        self.chats.insert((scope.to_owned(), turn), chat);
        self.chat_span(scope, turn)
    }

    fn chat_span(&self, scope: &str, turn: u32) -> SpanId {
        self.trace.span_id("chat", &format!("{scope}/{turn}"))
    }

    pub(super) fn model_retry(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let Event::ModelRetry {
            turn,
            attempt,
            delay_ms,
            error_kind,
            ..
        } = e
        else {
            return self.agent_span(scope);
        };
        let attributes = vec![
            KeyValue::new("cn_run.attempt", i64::from(*attempt)),
            KeyValue::new("cn_run.delay_ms", *delay_ms as i64),
            KeyValue::new("error.type", error_kind.clone()),
        ];
        let chat = self.chats.entry((scope.to_owned(), *turn)).or_insert(Chat {
            start: at,
            events: Vec::new(),
        });
        chat.events
            .push(event("cn_run.model.retry", at, attributes));
        self.chat_span(scope, *turn)
    }

    pub(super) fn assistant_message(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let Event::AssistantMessage {
            turn,
            text,
            tool_calls,
            usage,
            cost_usd,
            stop_reason,
        } = e
        else {
            return self.agent_span(scope);
        };
        let chat = self.chats.remove(&(scope.to_owned(), *turn));
        let (start, events) = chat.map_or((at, Vec::new()), |c| (c.start, c.events));
        let agent = self.agent_mut(scope, at);
        let (model, provider) = (agent.model.clone(), agent.provider.clone());
        if let Some(u) = usage {
            agent.input_tokens += u.input_tokens;
            agent.output_tokens += u.output_tokens;
        }
        let base = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("gen_ai.request.model", model.clone()),
        ];
        let mut attributes = base.clone();
        attributes.push(KeyValue::new("cn_run.turn", i64::from(*turn)));
        if let Some(reason) = stop_reason {
            let reasons = Value::Array(opentelemetry::Array::String(vec![reason.clone().into()]));
            attributes.push(KeyValue::new("gen_ai.response.finish_reasons", reasons));
        }
        if let Some(u) = usage {
            attributes.extend([
                KeyValue::new("gen_ai.usage.input_tokens", u.input_tokens as i64),
                KeyValue::new("gen_ai.usage.output_tokens", u.output_tokens as i64),
                KeyValue::new(
                    "gen_ai.usage.cache_read.input_tokens",
                    u.cache_read_tokens as i64,
                ),
                KeyValue::new(
                    "gen_ai.usage.cache_creation.input_tokens",
                    u.cache_write_tokens as i64,
                ),
            ]);
            for (kind, n) in [("input", u.input_tokens), ("output", u.output_tokens)] {
                let mut a = base.clone();
                a.push(KeyValue::new("gen_ai.token.type", kind));
                self.measure(Measure::new(Metric::TokenUsage, n as f64, a));
            }
        }
        if let Some(cost) = cost_usd {
            attributes.push(KeyValue::new("cn_run.cost_usd", *cost));
            let a = vec![
                self.job_attr(),
                KeyValue::new("gen_ai.request.model", model),
            ];
            self.measure(Measure::new(Metric::Cost, *cost, a));
        }
        let calls: Vec<_> = tool_calls
            .iter()
            .map(|c| json!({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        let mut parts = vec![json!({"type": "text", "content": text})];
        parts.extend(calls);
        let output = json!([{"role": "assistant", "parts": parts, "finish_reason": stop_reason}]);
        attributes.extend(
            self.texts
                .content("gen_ai.output.messages", &output.to_string()),
        );
        self.measure(Measure::new(
            Metric::OperationDuration,
            seconds(start, at),
            base,
        ));
        self.chat(scope, *turn, (start, at), attributes, events, None);
        self.chat_span(scope, *turn)
    }

    /// Emits one chat span.
    fn chat(
        &mut self,
        scope: &str,
        turn: u32,
        (start, end): (SystemTime, SystemTime),
        attributes: Vec<KeyValue>,
        events: Vec<opentelemetry::trace::Event>,
        error: Option<String>,
    ) {
        self.started_under(scope, start);
        let model = self
            .agents
            .get(scope)
            .map(|a| a.model.clone())
            .unwrap_or_default();
        let mut spec = SpanSpec::new(
            self.chat_span(scope, turn),
            self.agent_span(scope),
            format!("chat {model}"),
            SpanKind::Client,
        )
        .at(start, end);
        spec.attributes = attributes;
        spec.events = events;
        spec.error = error;
        self.push_span(spec);
    }

    /// Closes every request and call still open at the run's end, as ended by `why`.
    pub(super) fn close_all(&mut self, at: SystemTime, kind: &str, why: &str) {
        let mut chats: Vec<_> = self.chats.drain().collect();
        chats.sort_by(|a, b| a.0.cmp(&b.0));
        for ((scope, turn), chat) in chats {
            let (model, provider) = self
                .agents
                .get(&scope)
                .map(|a| (a.model.clone(), a.provider.clone()))
                .unwrap_or_default();
            let base = vec![
                KeyValue::new("gen_ai.operation.name", "chat"),
                KeyValue::new("gen_ai.provider.name", provider),
                KeyValue::new("gen_ai.request.model", model),
                KeyValue::new("error.type", kind.to_owned()),
            ];
            let secs = seconds(chat.start, at);
            self.measure(Measure::new(Metric::OperationDuration, secs, base.clone()));
            let error = Some(why.to_owned());
            self.chat(&scope, turn, (chat.start, at), base, chat.events, error);
        }
        self.close_calls(at, why);
        let mut open: Vec<String> = self
            .agents
            .keys()
            .filter(|k| !k.is_empty())
            .cloned()
            .collect();
        open.sort();
        for scope in open {
            self.end_agent(&scope, at, Some((kind, why.to_owned())));
        }
    }

    /// Emits the agent span of `scope`, ended at `at` (with an error type and description).
    pub(super) fn end_agent(&mut self, scope: &str, at: SystemTime, error: Option<(&str, String)>) {
        let Some(agent) = self.agents.remove(scope) else {
            return;
        };
        let (parent, remote) = match (scope, self.trace.parent) {
            ("", Some(parent)) => (parent, true),
            ("", None) => (SpanId::INVALID, false),
            (call, _) => (self.calls.tool_span(&self.trace, "", call), false),
        };
        let mut spec = SpanSpec::new(
            self.agent_span(scope),
            parent,
            format!("invoke_agent {}", agent.name),
            SpanKind::Internal,
        )
        .at(agent.start.min(agent.earliest), at);
        spec.remote_parent = remote;
        spec.attributes = agent.attributes;
        spec.attributes.extend([
            KeyValue::new("gen_ai.usage.input_tokens", agent.input_tokens as i64),
            KeyValue::new("gen_ai.usage.output_tokens", agent.output_tokens as i64),
        ]);
        spec.events = agent.events;
        if let Some((kind, why)) = error {
            spec.attributes
                .push(KeyValue::new("error.type", kind.to_owned()));
            spec.error = Some(self.texts.clean(&why));
        }
        self.push_span(spec);
        if !scope.is_empty() {
            self.started_under("", agent.start.min(agent.earliest));
        }
    }

    pub(super) fn run_completed(&mut self, at: SystemTime, e: &Event) -> SpanId {
        let Event::RunCompleted {
            status,
            exit_code,
            reason,
            limit,
            result,
            num_turns,
            duration_ms,
            total_cost_usd,
            ..
        } = e
        else {
            return self.agent_span("");
        };
        let word = status_word(*status);
        let failed = *status != crate::exit_code::Status::Success;
        if failed {
            self.close_all(at, &word, reason);
        } else {
            self.close_all(at, "cancelled", "the run ended before it finished");
        }
        let job = self.job_attr();
        let mut attributes = vec![
            KeyValue::new("cn_run.status", word.clone()),
            KeyValue::new("cn_run.exit_code", i64::from(*exit_code)),
            KeyValue::new("cn_run.reason", self.texts.value(reason)),
            KeyValue::new("cn_run.turns", i64::from(*num_turns)),
        ];
        if let Some(l) = limit {
            attributes.push(KeyValue::new("cn_run.limit", l.as_str()));
        }
        if let Some(cost) = total_cost_usd {
            attributes.push(KeyValue::new("cn_run.cost_usd", *cost));
        }
        let output = json!([{"role": "assistant", "parts": [{"type": "text", "content": result}]}]);
        attributes.extend(
            self.texts
                .content("gen_ai.output.messages", &output.to_string()),
        );
        let model = self
            .agents
            .get("")
            .map(|a| a.model.clone())
            .unwrap_or_default();
        let counted = vec![
            job.clone(),
            KeyValue::new("cn_run.status", word.clone()),
            KeyValue::new("cn_run.exit_code", i64::from(*exit_code)),
        ];
        self.measure(Measure::new(Metric::Runs, 1.0, counted));
        let secs = Duration::from_millis(*duration_ms).as_secs_f64();
        let timed = vec![job.clone(), KeyValue::new("cn_run.status", word.clone())];
        self.measure(Measure::new(Metric::RunDuration, secs, timed));
        let turns = vec![job, KeyValue::new("gen_ai.request.model", model)];
        self.measure(Measure::new(Metric::Turns, f64::from(*num_turns), turns));
        self.agent_mut("", at).attributes.extend(attributes);
        let error = failed.then(|| (word.as_str(), reason.clone()));
        self.end_agent("", at, error);
        self.completed = true;
        self.agent_span("")
    }

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
}
