//! The fold's tool side: an `execute_tool` span per call (with its permission decision),
//! the command-execution span of a Bash call (its exit code read from the call's whole
//! result), the MCP client span of an MCP call (the id its server was given), the
//! checkpoint spans, and the tool-call and MCP-connection metrics.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, SpanKind};
use serde_json::Value;

use super::RunFold;
use crate::conversation::Message;
use crate::events::{Event, Resolution, ToolStatus};
use crate::permissions::Decision;
use crate::telemetry::context::RunTrace;
use crate::telemetry::metrics::{Measure, Metric};
use crate::telemetry::spans::SpanSpec;

/// The calls of a run between their first event and their spans.
#[derive(Default)]
pub(in crate::telemetry) struct Calls {
    /// Calls not finished yet, by `scope/call_id`.
    open: HashMap<String, Call>,
    /// Bash calls waiting for their whole result (the exit code), by `scope/call_id`.
    commands: HashMap<String, Command>,
    /// The subagent each Subagent call runs, by call id.
    subagents: HashMap<String, String>,
    /// When each call finished (a checkpoint of its changes starts then), by call id.
    ended: HashMap<String, SystemTime>,
}

struct Call {
    tool: String,
    start: SystemTime,
    arguments: Option<Value>,
    ran: bool,
    decision: Option<(Resolution, Decision)>,
}

struct Command {
    start: SystemTime,
    end: SystemTime,
    command: String,
    ok: bool,
}

impl Call {
    /// `allowed`, `denied` or `failed` (`on_ask: fail`): what the policy made of the call.
    fn decision_word(&self) -> &'static str {
        match &self.decision {
            Some((Resolution::Allowed, _)) | None => "allowed",
            Some((Resolution::Denied, _)) => "denied",
            Some((Resolution::Failed, _)) => "failed",
            Some((Resolution::Deferred, _)) => "deferred",
        }
    }

    /// The command a Bash call that ran in the foreground ran, waiting for its result.
    fn command(&self, end: SystemTime, ok: bool) -> Option<Command> {
        let tool = crate::catalog::find(&self.tool)?;
        let args = self.arguments.as_ref()?;
        let command = tool.command(args)?;
        if !self.ran || tool.leaves_running(args) {
            return None;
        }
        Some(Command {
            start: self.start,
            end,
            command: command.to_owned(),
            ok,
        })
    }
}

impl Calls {
    /// The id of the `execute_tool` span of `call` in `scope`.
    pub(super) fn tool_span(&self, trace: &RunTrace, scope: &str, call: &str) -> SpanId {
        trace.span_id("tool", &format!("{scope}/{call}"))
    }

    /// When call `call` finished.
    pub(super) fn ended_at(&self, call: &str) -> Option<SystemTime> {
        self.ended.get(call).copied()
    }

    /// The name of the subagent the Subagent call `call` runs.
    pub(super) fn subagent_name(&self, call: &str) -> String {
        self.subagents
            .get(call)
            .cloned()
            .unwrap_or_else(|| "subagent".to_owned())
    }

    fn entry(&mut self, scope: &str, call: &str, tool: &str, at: SystemTime) -> &mut Call {
        self.open
            .entry(format!("{scope}/{call}"))
            .or_insert_with(|| Call {
                tool: tool.to_owned(),
                start: at,
                arguments: None,
                ran: false,
                decision: None,
            })
    }
}

/// The tool that runs a subagent.
const SUBAGENT: &str = crate::catalog::SUBAGENT.name;

/// How a Bash call's command ended, from the end of its whole result: its exit code, or
/// the kind of error when it has none.
fn command_end(content: &str, ok: bool) -> (Option<i64>, Option<&'static str>) {
    if ok {
        return (Some(0), None);
    }
    let line = content
        .lines()
        .rev()
        .find(|l| l.starts_with("[exit code: ") || l.starts_with("[command "));
    match line {
        Some(l) if l.starts_with("[exit code: ") => {
            let digits = l.trim_start_matches("[exit code: ").trim_end_matches(']');
            let code = digits.parse::<i64>().ok();
            (code, code.map(|_| "exit_code"))
        }
        Some(l) if l.contains("no output for") => (None, Some("timeout")),
        Some(l) if l.contains("killed by a signal") => (None, Some("killed")),
        Some(_) => (None, Some("cancelled")),
        None => (None, Some("not_run")),
    }
}

impl RunFold {
    pub(super) fn decision(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let Event::PermissionDecision {
            call_id,
            tool,
            resolution,
            decision,
            ..
        } = e
        else {
            return self.agent_span(scope);
        };
        self.calls.entry(scope, call_id, tool, at).decision = Some((*resolution, decision.clone()));
        self.calls.tool_span(&self.trace, scope, call_id)
    }

    pub(super) fn tool_started(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let Event::ToolStarted {
            call_id,
            tool,
            arguments,
            ..
        } = e
        else {
            return self.agent_span(scope);
        };
        if tool == SUBAGENT
            && let Some(name) = arguments.get("subagent_name").and_then(Value::as_str)
        {
            self.calls
                .subagents
                .insert(call_id.clone(), name.to_owned());
        }
        let call = self.calls.entry(scope, call_id, tool, at);
        call.start = call.start.min(at);
        call.arguments = Some(arguments.clone());
        call.ran = true;
        self.calls.tool_span(&self.trace, scope, call_id)
    }

    pub(super) fn tool_finished(&mut self, scope: &str, at: SystemTime, e: &Event) -> SpanId {
        let Event::ToolFinished {
            call_id,
            tool,
            status,
            output,
            duration_ms,
            ..
        } = e
        else {
            return self.agent_span(scope);
        };
        let began = at.checked_sub(Duration::from_millis(*duration_ms));
        let call = self.calls.open.remove(&format!("{scope}/{call_id}"));
        let call = call.unwrap_or_else(|| Call {
            tool: tool.clone(),
            start: began.unwrap_or(at),
            arguments: None,
            ran: *duration_ms > 0,
            decision: None,
        });
        self.calls.ended.insert(call_id.clone(), at);
        let ok = *status == ToolStatus::Ok;
        let id = self.tool_span(scope, call_id, &call, (at, ok), output);
        if call.ran {
            self.mcp_call(call_id, &call, at, ok, id);
        }
        if let Some(command) = call.command(at, ok) {
            self.calls
                .commands
                .insert(format!("{scope}/{call_id}"), command);
        }
        if scope.is_empty() && call.tool == SUBAGENT {
            let error = (!ok).then(|| ("tool_error", "the subagent's call failed".to_owned()));
            self.end_agent(call_id, at, error);
        }
        id
    }

    /// Emits the `execute_tool` span of a finished call and counts it.
    fn tool_span(
        &mut self,
        scope: &str,
        call_id: &str,
        call: &Call,
        (at, ok): (SystemTime, bool),
        output: &str,
    ) -> SpanId {
        let id = self.calls.tool_span(&self.trace, scope, call_id);
        let decision = call.decision_word();
        let parent = self.agent_span(scope);
        let name = format!("execute_tool {}", call.tool);
        let mut spec = SpanSpec::new(id, parent, name, SpanKind::Internal).at(call.start, at);
        spec.attributes = self.tool_attributes(call_id, call, ok, output);
        if !ok {
            let (kind, what) = match decision {
                "allowed" => ("tool_error", "failed"),
                _ => ("denied", "denied"),
            };
            spec.attributes.push(KeyValue::new("error.type", kind));
            spec.error = Some(format!("{} call {what}", call.tool));
        }
        self.started_under(scope, call.start);
        self.push_span(spec);
        let attrs = vec![
            self.job_attr(),
            KeyValue::new("gen_ai.tool.name", call.tool.clone()),
            KeyValue::new("cn_run.tool.decision", decision),
            KeyValue::new("cn_run.tool.status", if ok { "ok" } else { "error" }),
        ];
        self.measure(Measure::new(Metric::ToolCalls, 1.0, attrs));
        id
    }

    /// The attributes of a call's `execute_tool` span (content only when captured).
    fn tool_attributes(&self, call_id: &str, call: &Call, ok: bool, output: &str) -> Vec<KeyValue> {
        let kind = if call.tool.starts_with("mcp__") {
            "extension"
        } else {
            "function"
        };
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", call.tool.clone()),
            KeyValue::new("gen_ai.tool.call.id", call_id.to_owned()),
            KeyValue::new("gen_ai.tool.type", kind),
            KeyValue::new("cn_run.tool.decision", call.decision_word()),
            KeyValue::new("cn_run.tool.status", if ok { "ok" } else { "error" }),
        ];
        if let Some((_, d)) = &call.decision {
            attributes.extend([
                KeyValue::new("cn_run.permission", d.permission.as_str()),
                KeyValue::new("cn_run.permission.rule", d.rule.clone().unwrap_or_default()),
                KeyValue::new("cn_run.permission.source", super::word(&d.source)),
                KeyValue::new("cn_run.permission.reason", self.texts.value(&d.reason)),
            ]);
        }
        if let Some(args) = &call.arguments {
            let text = args.to_string();
            attributes.extend(self.texts.content("gen_ai.tool.call.arguments", &text));
        }
        attributes.extend(self.texts.content("gen_ai.tool.call.result", output));
        attributes
    }

    /// The client span of an MCP call, with the id its server was given as parent.
    fn mcp_call(&mut self, call_id: &str, call: &Call, at: SystemTime, ok: bool, parent: SpanId) {
        let Some((server, transport)) = self
            .mcp
            .iter()
            .find(|(s, _)| call.tool.starts_with(&format!("mcp__{s}__")))
            .cloned()
        else {
            return;
        };
        let remote = call.tool[format!("mcp__{server}__").len()..].to_owned();
        let mut spec = SpanSpec::new(
            self.trace.mcp_span(call_id),
            parent,
            format!("tools/call {remote}"),
            SpanKind::Client,
        )
        .at(call.start, at);
        spec.attributes = vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", remote),
            KeyValue::new("gen_ai.tool.call.id", call_id.to_owned()),
            KeyValue::new("cn_run.mcp.server", server),
            KeyValue::new("network.transport", transport),
        ];
        if !ok {
            spec.attributes
                .push(KeyValue::new("error.type", "tool_error"));
            spec.error = Some("the MCP call failed".to_owned());
        }
        self.push_span(spec);
    }

    /// A call's whole result: the exit code of a Bash call waiting for it.
    pub(super) fn message_appended(&mut self, scope: &str, _at: SystemTime, m: &Message) -> SpanId {
        let Message::Tool {
            tool_call_id,
            content,
            ..
        } = m
        else {
            return self.agent_span(scope);
        };
        let key = format!("{scope}/{tool_call_id}");
        if let Some(command) = self.calls.commands.remove(&key) {
            let (code, error) = command_end(content, command.ok);
            self.command_span(scope, tool_call_id, &command, code, error);
        }
        self.calls.tool_span(&self.trace, scope, tool_call_id)
    }

    /// The command-execution span of a Bash call (CLI conventions: `bash`, its exit code).
    fn command_span(
        &mut self,
        scope: &str,
        call_id: &str,
        c: &Command,
        code: Option<i64>,
        error: Option<&'static str>,
    ) {
        let parent = self.calls.tool_span(&self.trace, scope, call_id);
        let id = self.trace.span_id("command", &format!("{scope}/{call_id}"));
        let mut spec =
            SpanSpec::new(id, parent, "bash".to_owned(), SpanKind::Client).at(c.start, c.end);
        spec.attributes = vec![KeyValue::new("process.executable.name", "bash")];
        if let Some(code) = code {
            spec.attributes
                .push(KeyValue::new("process.exit.code", code));
        }
        if self.texts.capture {
            let args = ["bash", "-c", &self.texts.clean(&c.command)].map(|s| s.to_owned().into());
            spec.attributes.push(KeyValue::new(
                "process.command_args",
                opentelemetry::Value::Array(opentelemetry::Array::String(args.to_vec())),
            ));
        }
        if let Some(kind) = error {
            let kind = match code {
                Some(code) => code.to_string(),
                None => kind.to_owned(),
            };
            spec.attributes.push(KeyValue::new("error.type", kind));
            spec.error = Some("the command did not succeed".to_owned());
        }
        self.push_span(spec);
    }

    /// Calls still open when the run ends: their spans, ended by `why`.
    pub(super) fn close_calls(&mut self, at: SystemTime, why: &str) {
        let mut commands: Vec<_> = self.calls.commands.drain().collect();
        commands.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, command) in commands {
            let (scope, call) = key.split_once('/').unwrap_or(("", &key));
            let (scope, call) = (scope.to_owned(), call.to_owned());
            let ok = command.ok;
            self.command_span(
                &scope,
                &call,
                &command,
                ok.then_some(0),
                (!ok).then_some("cancelled"),
            );
        }
        let mut open: Vec<_> = self.calls.open.drain().collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, call) in open {
            let (scope, call_id) = key.split_once('/').unwrap_or(("", &key));
            let (scope, call_id) = (scope.to_owned(), call_id.to_owned());
            self.tool_span(&scope, &call_id, &call, (at, false), why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::command_end;

    #[test]
    fn a_commands_end_is_read_from_the_end_of_its_result() {
        assert_eq!(command_end("hi\n", true), (Some(0), None));
        assert_eq!(
            command_end("out\n[exit code: 3]\n[network: x]\n", false),
            (Some(3), Some("exit_code"))
        );
        assert_eq!(
            command_end(
                "[exit code: 1]\nmore\n[command stopped: no output for 5 s]\n",
                false
            ),
            (None, Some("timeout"))
        );
        assert_eq!(
            command_end("x\n[command killed by a signal]\n", false),
            (None, Some("killed"))
        );
        assert_eq!(
            command_end("[command stopped: the run is ending]", false),
            (None, Some("cancelled"))
        );
        assert_eq!(
            command_end("could not start", false),
            (None, Some("not_run"))
        );
    }
}
