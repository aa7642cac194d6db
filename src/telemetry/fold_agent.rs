//! The fold's agent side: the `invoke_agent` spans (the run's and each subagent's), with
//! what happened to the agent as span events, and the run's end with its metrics.

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, SpanKind};
use serde_json::json;

use super::RunFold;
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

/// `gen_ai.provider.name` of cn-run's provider names.
fn provider_name(provider: &str) -> String {
    match provider {
        "azure" => "azure.ai.openai".to_owned(),
        "script" => "cn_run.script".to_owned(),
        other => other.to_owned(),
    }
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
            KeyValue::new("cn_run.mode", mode.as_str()),
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

    /// An event noted on its agent span with one text attribute (redacted, capped).
    pub(super) fn note(
        &mut self,
        scope: &str,
        at: SystemTime,
        (name, key): (&'static str, &'static str),
        text: &str,
    ) -> SpanId {
        let attributes = vec![KeyValue::new(key, self.texts.value(text))];
        self.agent_event(scope, name, at, attributes)
    }

    /// Closes every request and call still open at the run's end, as ended by `why`.
    pub(super) fn close_all(&mut self, at: SystemTime, kind: &str, why: &str) {
        self.close_chats(at, kind, why);
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
        let word = status.as_str().to_owned();
        let failed = *status != crate::exit_code::Status::Success;
        if failed {
            self.close_all(at, &word, reason);
        } else {
            self.close_all(at, "cancelled", "the run ended before it finished");
        }
        let mut attributes = vec![
            KeyValue::new("cn_run.status", word.clone()),
            KeyValue::new("cn_run.exit_code", i64::from(*exit_code)),
            KeyValue::new("cn_run.reason", self.texts.value(reason)),
            KeyValue::new("cn_run.turns", i64::from(*num_turns)),
        ];
        attributes.extend(limit.map(|l| KeyValue::new("cn_run.limit", l.as_str())));
        attributes.extend(total_cost_usd.map(|c| KeyValue::new("cn_run.cost_usd", c)));
        let output = json!([{"role": "assistant", "parts": [{"type": "text", "content": result}]}]);
        let output = output.to_string();
        attributes.extend(self.texts.content("gen_ai.output.messages", &output));
        let secs = Duration::from_millis(*duration_ms).as_secs_f64();
        self.run_measures(&word, *exit_code, secs, *num_turns);
        self.agent_mut("", at).attributes.extend(attributes);
        let error = failed.then(|| (word.as_str(), reason.clone()));
        self.end_agent("", at, error);
        self.completed = true;
        self.agent_span("")
    }

    /// The run-level metrics of a run that ended.
    fn run_measures(&mut self, status: &str, exit_code: i32, secs: f64, turns: u32) {
        let job = self.job_attr();
        let model = self.agents.get("").map(|a| a.model.clone());
        let status = KeyValue::new("cn_run.status", status.to_owned());
        let counted = vec![
            job.clone(),
            status.clone(),
            KeyValue::new("cn_run.exit_code", i64::from(exit_code)),
        ];
        self.measure(Measure::new(Metric::Runs, 1.0, counted));
        let timed = vec![job.clone(), status];
        self.measure(Measure::new(Metric::RunDuration, secs, timed));
        let model = KeyValue::new("gen_ai.request.model", model.unwrap_or_default());
        self.measure(Measure::new(
            Metric::Turns,
            f64::from(turns),
            vec![job, model],
        ));
    }
}
