//! The fold's model side: a `chat {model}` span per model request, from `turn.started` to
//! the answer (retries as span events), with the GenAI client metrics (token usage,
//! operation duration), the cost, and the time to the run's first request.

use std::time::SystemTime;

use opentelemetry::trace::{SpanId, SpanKind};
use opentelemetry::{KeyValue, Value};
use serde_json::json;

use super::{RunFold, seconds};
use crate::conversation::{ToolCall, Usage};
use crate::events::Event;
use crate::telemetry::metrics::{Measure, Metric};
use crate::telemetry::spans::{SpanSpec, event};

/// A model request while it is in flight.
pub(in crate::telemetry) struct Chat {
    pub start: SystemTime,
    pub events: Vec<opentelemetry::trace::Event>,
}

impl Chat {
    fn at(start: SystemTime) -> Self {
        Chat {
            start,
            events: Vec::new(),
        }
    }
}

/// What the model answered, as `gen_ai.output.messages` (text parts and tool calls).
fn output_messages(text: &str, calls: &[ToolCall], stop_reason: Option<&String>) -> String {
    let mut parts = vec![json!({"type": "text", "content": text})];
    parts.extend(calls.iter().map(
        |c| json!({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}),
    ));
    json!([{"role": "assistant", "parts": parts, "finish_reason": stop_reason}]).to_string()
}

/// The usage of one response as span attributes.
fn usage_attributes(u: &Usage) -> [KeyValue; 4] {
    [
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
    ]
}

impl RunFold {
    pub(super) fn turn_started(&mut self, scope: &str, turn: u32, at: SystemTime) -> SpanId {
        self.agent_mut(scope, at);
        if scope.is_empty() && !self.first_request {
            self.first_request = true;
            let start = self.process_start.unwrap_or(at);
            let attrs = vec![self.job_attr()];
            let secs = seconds(start, at);
            self.measure(Measure::new(Metric::TimeToFirstRequest, secs, attrs));
        }
        self.chats.insert((scope.to_owned(), turn), Chat::at(at));
        self.chat_span(scope, turn)
    }

    pub(super) fn chat_span(&self, scope: &str, turn: u32) -> SpanId {
        self.trace.span_id("chat", &format!("{scope}/{turn}"))
    }

    /// The attributes every chat span and GenAI metric of `scope` has.
    fn chat_base(&self, scope: &str) -> Vec<KeyValue> {
        let (model, provider) = self
            .agents
            .get(scope)
            .map(|a| (a.model.clone(), a.provider.clone()))
            .unwrap_or_default();
        vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("gen_ai.request.model", model),
        ]
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
            KeyValue::new("error.type", error_kind.as_str()),
        ];
        let key = (scope.to_owned(), *turn);
        let chat = self.chats.entry(key).or_insert_with(|| Chat::at(at));
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
        let chat = chat.unwrap_or_else(|| Chat::at(at));
        let base = self.chat_base(scope);
        let mut attributes = base.clone();
        attributes.push(KeyValue::new("cn_run.turn", i64::from(*turn)));
        if let Some(reason) = stop_reason {
            let reasons = opentelemetry::Array::String(vec![reason.clone().into()]);
            let reasons = Value::Array(reasons);
            attributes.push(KeyValue::new("gen_ai.response.finish_reasons", reasons));
        }
        if let Some(u) = usage {
            attributes.extend(usage_attributes(u));
            self.count_usage(scope, at, u, &base);
        }
        if let Some(cost) = cost_usd {
            attributes.push(KeyValue::new("cn_run.cost_usd", *cost));
            let model = base[2].clone();
            let a = vec![self.job_attr(), model];
            self.measure(Measure::new(Metric::Cost, *cost, a));
        }
        let output = output_messages(text, tool_calls, stop_reason.as_ref());
        attributes.extend(self.texts.content("gen_ai.output.messages", &output));
        let secs = seconds(chat.start, at);
        self.measure(Measure::new(Metric::OperationDuration, secs, base));
        self.chat(
            scope,
            *turn,
            (chat.start, at),
            attributes,
            chat.events,
            None,
        );
        self.chat_span(scope, *turn)
    }

    /// A response's tokens: on its agent span, and as the token-usage metric.
    fn count_usage(&mut self, scope: &str, at: SystemTime, u: &Usage, base: &[KeyValue]) {
        let agent = self.agent_mut(scope, at);
        agent.input_tokens += u.input_tokens;
        agent.output_tokens += u.output_tokens;
        for (kind, n) in [("input", u.input_tokens), ("output", u.output_tokens)] {
            let mut a = base.to_vec();
            a.push(KeyValue::new("gen_ai.token.type", kind));
            self.measure(Measure::new(Metric::TokenUsage, n as f64, a));
        }
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
        let id = self.chat_span(scope, turn);
        let mut spec = SpanSpec::new(
            id,
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

    /// Requests still in flight when the run ended: their spans, ended by `why`.
    pub(super) fn close_chats(&mut self, at: SystemTime, kind: &str, why: &str) {
        let mut chats: Vec<_> = self.chats.drain().collect();
        chats.sort_by(|a, b| a.0.cmp(&b.0));
        for ((scope, turn), chat) in chats {
            let mut base = self.chat_base(&scope);
            base.push(KeyValue::new("error.type", kind.to_owned()));
            let secs = seconds(chat.start, at);
            self.measure(Measure::new(Metric::OperationDuration, secs, base.clone()));
            let error = Some(why.to_owned());
            self.chat(&scope, turn, (chat.start, at), base, chat.events, error);
        }
    }
}
