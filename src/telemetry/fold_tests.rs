//! The fold fed events by hand: the span tree, names, times, attributes and measurements.

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Key, Value};
use serde_json::json;

use super::*;
use crate::conversation::{ToolCall, Usage};
use crate::events::{Resolution, ToolStatus};
use crate::exit_code::Status as RunStatus;
use crate::redact::Redactor;
use crate::telemetry::context::TraceParent;
use crate::telemetry::metrics::Metric;

const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const SECRET: &str = "planted-s3cret-value";

struct Run {
    fold: RunFold,
    seq: u64,
    spans: Vec<SpanData>,
    logs: Vec<LogItem>,
    measures: Vec<Measure>,
}

impl Run {
    fn new(capture: bool) -> Self {
        let parent = TraceParent::parse(PARENT, None);
        let trace = RunTrace::new(parent.as_ref(), true, [7; 8]);
        let texts = Texts {
            redactor: Redactor::from_values(vec![SECRET.to_owned()]),
            capture,
            limit: 64,
        };
        let start = time_of("2026-01-01T00:00:00.000Z");
        Run {
            fold: RunFold::new(trace, texts, start),
            seq: 0,
            spans: Vec::new(),
            logs: Vec::new(),
            measures: Vec::new(),
        }
    }

    /// Feeds `event` at `ms` milliseconds after the start (in subagent `parent` if set).
    fn at(&mut self, ms: i64, parent: Option<&str>, event: Event) -> &mut Self {
        self.seq += 1;
        let ts = jiff::Timestamp::from_millisecond(1_767_225_600_000 + ms).unwrap();
        let env = Envelope {
            schema_version: 1,
            seq: self.seq,
            ts: format!("{ts:.3}"),
            run_id: "run-1".into(),
            parent_call_id: parent.map(str::to_owned),
            event,
        };
        let outs = self.fold.on_event(&env);
        self.take(outs);
        self
    }

    fn take(&mut self, outs: Vec<Out>) {
        for out in outs {
            match out {
                Out::Span(s) => self.spans.push(*s),
                Out::Log(l) => self.logs.push(*l),
                Out::Measure(m) => self.measures.push(m),
            }
        }
    }

    fn span(&self, name: &str) -> &SpanData {
        let found = self.spans.iter().find(|s| s.name == name);
        found.unwrap_or_else(|| panic!("no span {name} in {:?}", self.names()))
    }

    fn names(&self) -> Vec<String> {
        self.spans.iter().map(|s| s.name.to_string()).collect()
    }

    fn sum(&self, metric: Metric) -> f64 {
        self.measures
            .iter()
            .filter(|m| m.metric == metric)
            .map(|m| m.value)
            .sum()
    }
}

fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::new(key.to_owned()))
        .map(|kv| kv.value.clone())
}

fn run_started() -> Event {
    Event::RunStarted {
        job: "fix-lint".into(),
        prompt: format!("fix it {SECRET}"),
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        workspace: "/w".into(),
        tools: vec!["Bash".into()],
        mode: crate::events::Mode::Headless,
        resumed: false,
        continues: false,
        output_dir: "/o".into(),
        session_path: None,
        checks: vec!["tests".into()],
        isolation: None,
        sandbox: None,
        policy: Vec::new(),
        report_path: None,
        trace_id: None,
    }
}

fn answer(turn: u32, text: &str, calls: Vec<ToolCall>) -> Event {
    Event::AssistantMessage {
        turn,
        text: text.into(),
        tool_calls: calls,
        usage: Some(Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }),
        cost_usd: Some(0.01),
        stop_reason: Some("tool_calls".into()),
    }
}

fn bash_call(id: &str, command: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "Bash".into(),
        arguments: json!({"command": command}).to_string(),
    }
}

fn tool_started(id: &str, tool: &str, args: serde_json::Value) -> Event {
    Event::ToolStarted {
        turn: 1,
        call_id: id.into(),
        tool: tool.into(),
        arguments: args,
        decision: None,
    }
}

fn tool_finished(id: &str, tool: &str, status: ToolStatus, output: &str, ms: u64) -> Event {
    Event::ToolFinished {
        turn: 1,
        call_id: id.into(),
        tool: tool.into(),
        status,
        output: output.into(),
        duration_ms: ms,
    }
}

fn result_of(id: &str, content: &str, is_error: bool) -> Event {
    Event::MessageAppended {
        message: crate::conversation::Message::Tool {
            tool_call_id: id.into(),
            name: "Bash".into(),
            content: content.into(),
            is_error,
            images: Vec::new(),
        },
    }
}

fn completed(status: RunStatus, turns: u32) -> Event {
    Event::RunCompleted {
        status,
        exit_code: status.exit_code(),
        reason: "why".into(),
        limit: None,
        result: format!("done {SECRET}"),
        num_turns: turns,
        duration_ms: 5000,
        usage: Usage::default(),
        total_cost_usd: Some(0.02),
        cost_unknown: false,
        agent_finished: true,
        checklist: None,
    }
}

fn check(passed: bool) -> Event {
    Event::CheckFinished(crate::checks::CheckResult {
        name: "tests".into(),
        attempt: 1,
        passed,
        exit_code: Some(if passed { 0 } else { 2 }),
        duration_ms: 300,
        timed_out: false,
        output_tail: "ok".into(),
        interrupted: false,
    })
}

/// A run with one Bash call, a checkpoint, a second answer and a check.
fn passing_run(capture: bool) -> Run {
    let mut r = Run::new(capture);
    r.at(10, None, run_started())
        .at(20, None, Event::TurnStarted { turn: 1 })
        .at(120, None, answer(1, "", vec![bash_call("c1", "make test")]))
        .at(
            130,
            None,
            tool_started(
                "c1",
                "Bash",
                json!({"command": format!("make test {SECRET}")}),
            ),
        )
        .at(
            330,
            None,
            tool_finished("c1", "Bash", ToolStatus::Ok, "all good", 200),
        )
        .at(331, None, result_of("c1", "all good\n", false))
        .at(
            360,
            None,
            Event::CheckpointCreated {
                turn: 1,
                index: 1,
                reference: "refs/cn-run/x/1".into(),
                commit: "abc".into(),
                call_id: Some("c1".into()),
                label: "Bash c1".into(),
                files_changed: 2,
                skipped: Vec::new(),
            },
        )
        .at(400, None, Event::TurnStarted { turn: 2 })
        .at(500, None, answer(2, "done", Vec::new()))
        .at(900, None, check(true))
        .at(950, None, completed(RunStatus::Success, 2));
    r
}

#[test]
fn a_passing_run_is_one_tree_under_the_callers_span_with_real_times() {
    let r = passing_run(false);
    let mut names = r.names();
    names.sort();
    assert_eq!(
        names,
        [
            "bash",
            "chat gpt-4.1",
            "chat gpt-4.1",
            "check tests",
            "checkpoint",
            "execute_tool Bash",
            "invoke_agent fix-lint"
        ]
    );
    let agent = r.span("invoke_agent fix-lint");
    let caller = TraceParent::parse(PARENT, None).unwrap();
    assert_eq!(agent.span_context.trace_id(), caller.trace_id);
    assert_eq!(agent.parent_span_id, caller.span_id);
    assert!(agent.parent_span_is_remote);
    assert_eq!(agent.span_kind, SpanKind::Internal);
    assert_eq!(agent.status, Status::Unset);
    assert!(
        r.spans
            .iter()
            .all(|s| s.span_context.trace_id() == caller.trace_id)
    );
    let id = agent.span_context.span_id();
    for child in [
        "chat gpt-4.1",
        "execute_tool Bash",
        "checkpoint",
        "check tests",
    ] {
        assert_eq!(r.span(child).parent_span_id, id, "{child}");
        assert!(r.span(child).start_time >= agent.start_time, "{child}");
    }
    let tool = r.span("execute_tool Bash");
    assert_eq!(r.span("bash").parent_span_id, tool.span_context.span_id());
    assert_eq!(
        attr(r.span("bash"), "process.exit.code"),
        Some(Value::I64(0))
    );
    assert_eq!(
        tool.end_time
            .duration_since(tool.start_time)
            .unwrap()
            .as_millis(),
        200
    );
    assert_eq!(
        attr(r.span("check tests"), "cn_run.check.result"),
        Some("passed".into())
    );
    let check = r.span("check tests");
    assert_eq!(
        check
            .end_time
            .duration_since(check.start_time)
            .unwrap()
            .as_millis(),
        300
    );
    assert_eq!(
        attr(agent, "gen_ai.operation.name"),
        Some("invoke_agent".into())
    );
    assert_eq!(attr(agent, "cn_run.status"), Some("success".into()));
    assert_eq!(attr(agent, "cn_run.exit_code"), Some(Value::I64(0)));
    assert_eq!(
        attr(agent, "gen_ai.usage.input_tokens"),
        Some(Value::I64(200))
    );
    assert_eq!(attr(agent, "cn_run.run.id"), Some("run-1".into()));
    assert_eq!(r.sum(Metric::Runs), 1.0);
    assert_eq!(r.sum(Metric::TokenUsage), 240.0);
    assert_eq!(r.sum(Metric::ToolCalls), 1.0);
    assert_eq!(r.sum(Metric::Checks), 1.0);
    assert!((r.sum(Metric::Cost) - 0.02).abs() < 1e-9);
    let first = r
        .measures
        .iter()
        .find(|m| m.metric == Metric::TimeToFirstRequest)
        .unwrap();
    assert!((first.value - 0.02).abs() < 1e-6, "{}", first.value);
}

#[test]
fn content_is_left_out_unless_captured_and_then_redacted_and_capped() {
    let plain = passing_run(false);
    let tool = plain.span("execute_tool Bash");
    assert_eq!(attr(tool, "gen_ai.tool.call.arguments"), None);
    assert_eq!(
        attr(plain.span("invoke_agent fix-lint"), "gen_ai.input.messages"),
        None
    );
    assert_eq!(attr(plain.span("bash"), "process.command_args"), None);
    let logged = format!("{:?}", plain.logs);
    assert!(
        !logged.contains("make test") && !logged.contains("fix it"),
        "{logged}"
    );
    let captured = passing_run(true);
    let args = attr(
        captured.span("execute_tool Bash"),
        "gen_ai.tool.call.arguments",
    )
    .unwrap();
    assert!(args.as_str().contains("make test"), "{args}");
    let everything = format!("{:?} {:?}", captured.spans, captured.logs);
    assert!(everything.contains("fix it"));
    assert!(!everything.contains(SECRET), "the planted secret left");
    let input = attr(
        captured.span("invoke_agent fix-lint"),
        "gen_ai.input.messages",
    )
    .unwrap();
    assert!(
        input.as_str().len() <= 64 + "[… 9999 more bytes]".len(),
        "{input}"
    );
}

#[test]
fn a_failing_command_a_denied_call_and_a_provider_error_end_their_spans_in_error() {
    let mut r = Run::new(false);
    let decision = crate::permissions::Decision {
        permission: crate::permissions::Permission::Exclude,
        rule: Some("Bash(rm *)".into()),
        source: crate::permissions::Source::Job,
        reason: "excluded".into(),
        allow_hint: None,
    };
    r.at(0, None, run_started())
        .at(1, None, Event::TurnStarted { turn: 1 })
        .at(
            5,
            None,
            answer(
                1,
                "",
                vec![bash_call("c1", "false"), bash_call("c2", "rm x")],
            ),
        )
        .at(
            6,
            None,
            tool_started("c1", "Bash", json!({"command": "false"})),
        )
        .at(
            7,
            None,
            Event::PermissionDecision {
                turn: 1,
                call_id: "c2".into(),
                tool: "Bash".into(),
                arguments: json!({"command": "rm x"}),
                resolution: Resolution::Denied,
                decision,
            },
        )
        .at(
            8,
            None,
            tool_finished("c2", "Bash", ToolStatus::Error, "denied", 0),
        )
        .at(9, None, result_of("c2", "denied", true))
        .at(
            20,
            None,
            tool_finished("c1", "Bash", ToolStatus::Error, "x", 14),
        )
        .at(
            21,
            None,
            result_of("c1", "lots of output\n[exit code: 1]\n", true),
        )
        .at(30, None, Event::TurnStarted { turn: 2 })
        .at(90, None, completed(RunStatus::ProviderError, 2));
    let commands: Vec<_> = r.spans.iter().filter(|s| s.name == "bash").collect();
    assert_eq!(commands.len(), 1, "a denied call runs no command");
    assert_eq!(attr(commands[0], "process.exit.code"), Some(Value::I64(1)));
    assert_eq!(attr(commands[0], "error.type"), Some("1".into()));
    let denied = r
        .spans
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id") == Some("c2".into()))
        .unwrap();
    assert_eq!(attr(denied, "cn_run.tool.decision"), Some("denied".into()));
    assert_eq!(
        attr(denied, "cn_run.permission.rule"),
        Some("Bash(rm *)".into())
    );
    assert!(matches!(denied.status, Status::Error { .. }));
    let chats: Vec<_> = r
        .spans
        .iter()
        .filter(|s| s.name == "chat gpt-4.1")
        .collect();
    assert_eq!(chats.len(), 2);
    let open = chats
        .iter()
        .find(|s| attr(s, "error.type").is_some())
        .unwrap();
    assert_eq!(attr(open, "error.type"), Some("provider_error".into()));
    let agent = r.span("invoke_agent fix-lint");
    assert!(matches!(agent.status, Status::Error { .. }));
    assert_eq!(attr(agent, "error.type"), Some("provider_error".into()));
    assert_eq!(attr(agent, "cn_run.exit_code"), Some(Value::I64(5)));
}

#[test]
fn a_subagents_calls_hang_under_its_own_agent_span_under_the_subagent_call() {
    let mut r = Run::new(false);
    let sub = ToolCall {
        id: "s1".into(),
        name: "Subagent".into(),
        arguments: "{}".into(),
    };
    r.at(0, None, run_started())
        .at(1, None, Event::TurnStarted { turn: 1 })
        .at(2, None, answer(1, "", vec![sub]))
        .at(
            3,
            None,
            tool_started(
                "s1",
                "Subagent",
                json!({"subagent_name": "scout", "prompt": "p"}),
            ),
        )
        .at(4, Some("s1"), Event::TurnStarted { turn: 1 })
        .at(5, Some("s1"), answer(1, "", vec![bash_call("c1", "ls")]))
        .at(
            6,
            Some("s1"),
            tool_started("c1", "Bash", json!({"command": "ls"})),
        )
        .at(
            7,
            Some("s1"),
            tool_finished("c1", "Bash", ToolStatus::Ok, "a", 1),
        )
        .at(8, Some("s1"), result_of("c1", "a", false))
        .at(
            9,
            None,
            tool_finished("s1", "Subagent", ToolStatus::Ok, "found", 6),
        )
        .at(10, None, completed(RunStatus::Success, 3));
    let nested = r.span("invoke_agent scout");
    let call = r
        .spans
        .iter()
        .find(|s| s.name == "execute_tool Subagent")
        .unwrap();
    assert_eq!(nested.parent_span_id, call.span_context.span_id());
    let inner: Vec<_> = r
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .collect();
    assert_eq!(inner.len(), 1);
    assert_eq!(inner[0].parent_span_id, nested.span_context.span_id());
    assert_ne!(nested.span_context.span_id(), SpanId::INVALID);
}

#[test]
fn a_run_that_never_completes_has_its_spans_closed_at_the_end_of_the_process() {
    let mut r = Run::new(false);
    r.at(0, None, run_started())
        .at(1, None, Event::TurnStarted { turn: 1 })
        .at(2, None, answer(1, "", vec![bash_call("c1", "sleep 100")]))
        .at(
            3,
            None,
            tool_started("c1", "Bash", json!({"command": "sleep 100"})),
        );
    assert_eq!(
        r.names(),
        ["chat gpt-4.1"],
        "only the answered request has ended"
    );
    let outs = r.fold.finish();
    r.take(outs);
    let agent = r.span("invoke_agent fix-lint");
    assert_eq!(attr(agent, "error.type"), Some("internal_error".into()));
    assert!(matches!(
        r.span("execute_tool Bash").status,
        Status::Error { .. }
    ));
}
