//! OpenTelemetry end to end: the real binary exports to a loopback collector that decodes
//! with the official OTLP protobuf definitions (`support/otlp.rs`), over http/protobuf and
//! gRPC. Passing, failing, limited, SIGTERM-killed and `--parallel` runs are checked for
//! their span tree under the caller's `TRACEPARENT`, span names and attributes, metrics and
//! logs; an unreachable or hanging collector changes nothing but a warning and costs the
//! run at most the export timeout.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;

use crate::support::otlp::{Collector, Received, Wire, attrs};
use crate::support::runner::{Run, cn_run, git_init, run, write_files};

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const HEADER_TOKEN: &str = "planted-otlp-token-4242";

fn caller() -> String {
    format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A received span, readable.
#[derive(Debug, Clone)]
struct S {
    name: String,
    trace: String,
    id: String,
    parent: String,
    kind: i32,
    error: bool,
    attrs: BTreeMap<String, String>,
    resource: BTreeMap<String, String>,
    start: u64,
    end: u64,
}

fn spans(received: &Received) -> Vec<S> {
    received
        .spans()
        .into_iter()
        .map(|(resource, s): (_, Span)| S {
            name: s.name.clone(),
            trace: hex(&s.trace_id),
            id: hex(&s.span_id),
            parent: hex(&s.parent_span_id),
            kind: s.kind,
            error: s.status.as_ref().is_some_and(|st| st.code == 2),
            attrs: attrs(&s.attributes),
            resource,
            start: s.start_time_unix_nano,
            end: s.end_time_unix_nano,
        })
        .collect()
}

fn named<'a>(all: &'a [S], name: &str) -> Vec<&'a S> {
    all.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(all: &'a [S], name: &str) -> &'a S {
    let found = named(all, name);
    assert_eq!(
        found.len(),
        1,
        "{name}: {:#?}",
        all.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

/// The sum of a counter's data points whose attributes include `filter`.
fn counted(received: &Received, metric: &str, filter: &[(&str, &str)]) -> f64 {
    let metrics = received.metrics();
    let Some(m) = metrics.get(metric) else {
        panic!(
            "no metric {metric}: {:?}",
            metrics.keys().collect::<Vec<_>>()
        );
    };
    let keep = |a: &BTreeMap<String, String>| {
        filter
            .iter()
            .all(|(k, v)| a.get(*k).map(String::as_str) == Some(*v))
    };
    match &m.data {
        Some(Data::Sum(sum)) => sum
            .data_points
            .iter()
            .filter(|p| keep(&attrs(&p.attributes)))
            .map(|p| match p.value {
                Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(
                    i,
                )) => i as f64,
                Some(
                    opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(d),
                ) => d,
                None => 0.0,
            })
            .sum(),
        Some(Data::Histogram(h)) => h
            .data_points
            .iter()
            .filter(|p| keep(&attrs(&p.attributes)))
            .map(|p| p.sum.unwrap_or_default())
            .sum(),
        other => panic!("{metric}: {other:?}"),
    }
}

/// The number of recordings of a histogram.
fn recordings(received: &Received, metric: &str) -> u64 {
    match &received.metrics().get(metric).and_then(|m| m.data.clone()) {
        Some(Data::Histogram(h)) => h.data_points.iter().map(|p| p.count).sum(),
        other => panic!("{metric}: {other:?}"),
    }
}

/// `cmd` exporting to `c` under the caller's trace, as in a GitHub Actions step.
fn exporting(cmd: &mut Command, c: &Collector, dir: &Path) {
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", c.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", c.wire.protocol())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "10000")
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("x-collector-token={HEADER_TOKEN}"),
        )
        .env("TRACEPARENT", caller())
        .env("TRACESTATE", "vendor=opaque")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "acme/widgets")
        .env("GITHUB_WORKFLOW", "nightly agents")
        .env("GITHUB_RUN_ID", "777")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("outputs.txt"));
}

const PASSING_SCRIPT: &str = "turns:\n  - tool_calls:\n      - {name: Bash, id: call_1, arguments: {command: 'echo hi > note.txt'}}\n    usage: {input_tokens: 120, output_tokens: 7}\n  - text: 'done, token planted-otlp-token-4242'\n    usage: {input_tokens: 150, output_tokens: 3}\n";

/// A job named `name` in `dir` (a git repository), with `extra` YAML lines.
fn job(dir: &Path, name: &str, script: &str, extra: &str) {
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: gpt-4.1, script: {name}.yaml}}\nprompt: fix it\npermissions: {{allow: ['Bash(echo *)', 'Bash(sleep *)']}}\n{extra}"
    );
    write_files(
        dir,
        &[
            (&format!("{name}.yaml"), script),
            (&format!("{name}.job.yaml"), &job),
        ],
    );
}

fn workspace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    git_init(tmp.path());
    tmp
}

/// Runs the job `name` exporting to `c`.
fn run_exporting(tmp: &Path, name: &str, c: &Collector) -> Run {
    let mut cmd = cn_run(tmp);
    cmd.arg(format!("{name}.job.yaml"));
    exporting(&mut cmd, c, tmp);
    run(cmd, Some(&tmp.join("out")))
}

/// The agent span of a run and its direct children's names.
fn tree_of<'a>(all: &'a [S], agent: &S) -> Vec<&'a S> {
    all.iter().filter(|s| s.parent == agent.id).collect()
}

fn passing_run_over(wire: Wire) {
    let tmp = workspace();
    let c = Collector::start(wire);
    job(
        tmp.path(),
        "pass",
        PASSING_SCRIPT,
        "checks: [{name: smoke, run: 'true'}]\n",
    );
    let r = run_exporting(tmp.path(), "pass", &c);
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["trace_id"], CALLER_TRACE);
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).unwrap();
    assert!(summary.contains(CALLER_TRACE), "{summary}");
    let got = c.received();
    let all = spans(&got);
    assert!(all.iter().all(|s| s.trace == CALLER_TRACE), "{all:#?}");
    let agent = one(&all, "invoke_agent pass");
    assert_eq!(agent.parent, CALLER_SPAN);
    assert_eq!(agent.kind, 1, "internal");
    assert!(!agent.error);
    assert_eq!(agent.attrs["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(agent.attrs["gen_ai.agent.name"], "pass");
    assert_eq!(
        agent.attrs["cn_run.run.id"],
        result["run_id"].as_str().unwrap()
    );
    assert_eq!(agent.attrs["cn_run.status"], "success");
    assert_eq!(agent.attrs["cn_run.exit_code"], "0");
    assert_eq!(agent.attrs["gen_ai.usage.input_tokens"], "270");
    let mut children: Vec<&str> = tree_of(&all, agent)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    children.sort_unstable();
    children.dedup();
    assert_eq!(
        children,
        [
            "chat gpt-4.1",
            "check smoke",
            "checkpoint",
            "execute_tool Bash"
        ],
        "{all:#?}"
    );
    let chats = named(&all, "chat gpt-4.1");
    assert_eq!(chats.len(), 2);
    assert!(
        chats
            .iter()
            .all(|s| s.kind == 3 && s.attrs["gen_ai.operation.name"] == "chat")
    );
    assert!(
        chats
            .iter()
            .any(|s| s.attrs["gen_ai.usage.input_tokens"] == "120")
    );
    let tool = one(&all, "execute_tool Bash");
    assert_eq!(tool.attrs["gen_ai.tool.call.id"], "call_1");
    assert_eq!(tool.attrs["cn_run.tool.decision"], "allowed");
    assert!(
        !tool.attrs.contains_key("gen_ai.tool.call.arguments"),
        "content is opt-in"
    );
    let bash = one(&all, "bash");
    assert_eq!(bash.parent, tool.id);
    assert_eq!(bash.attrs["process.exit.code"], "0");
    let check = one(&all, "check smoke");
    assert_eq!(check.attrs["cn_run.check.result"], "passed");
    for s in &all {
        assert!(
            s.start <= s.end && s.start >= agent.start && s.end <= agent.end,
            "{s:#?}"
        );
    }
    assert_eq!(agent.resource["service.name"], "cn-run");
    assert_eq!(agent.resource["vcs.repository.name"], "widgets");
    assert_eq!(agent.resource["cicd.pipeline.name"], "nightly agents");
    assert_eq!(
        counted(
            &got,
            "gen_ai.client.token.usage",
            &[("gen_ai.token.type", "input")]
        ),
        270.0
    );
    assert_eq!(
        counted(
            &got,
            "gen_ai.client.token.usage",
            &[("gen_ai.token.type", "output")]
        ),
        10.0
    );
    assert_eq!(recordings(&got, "gen_ai.client.operation.duration"), 2);
    assert_eq!(
        counted(&got, "cn_run.run.count", &[("cn_run.status", "success")]),
        1.0
    );
    assert_eq!(counted(&got, "cn_run.turn.count", &[]), 2.0);
    assert_eq!(
        counted(
            &got,
            "cn_run.tool.call.count",
            &[("cn_run.tool.decision", "allowed")]
        ),
        1.0
    );
    assert_eq!(
        counted(
            &got,
            "cn_run.check.count",
            &[("cn_run.check.result", "passed")]
        ),
        1.0
    );
    assert_eq!(recordings(&got, "cn_run.time_to_first_request"), 1);
    assert_eq!(
        got.metric_resource()["vcs.repository.url.full"],
        "https://github.com/acme/widgets"
    );
    let logs = got.log_records();
    let done = logs
        .iter()
        .find(|l| l.event_name == "cn_run.run.completed")
        .expect("run.completed log");
    assert_eq!(hex(&done.trace_id), CALLER_TRACE);
    assert_eq!(hex(&done.span_id), agent.id);
    assert!(
        got.requests
            .iter()
            .all(|(_, h)| h.get("x-collector-token").map(String::as_str) == Some(HEADER_TOKEN))
    );
    // The collector's credential is a registered secret: the answer that quotes it is masked
    // (stderr carries it once, in GitHub's `::add-mask::` command, by design).
    let written = format!(
        "{}{}",
        r.stdout,
        std::fs::read_to_string(tmp.path().join("out/result.json")).unwrap()
    );
    assert!(
        !written.contains(HEADER_TOKEN),
        "the OTLP header value leaked"
    );
}

#[test]
fn a_passing_run_exports_its_span_tree_metrics_and_logs_over_http_protobuf() {
    passing_run_over(Wire::HttpProtobuf);
}

#[test]
fn a_passing_run_exports_its_span_tree_metrics_and_logs_over_grpc() {
    passing_run_over(Wire::Grpc);
}

#[test]
fn a_failing_run_ends_its_spans_in_error_and_counts_the_denial_and_the_failed_check() {
    let tmp = workspace();
    let c = Collector::start(Wire::HttpProtobuf);
    let script = "turns:\n  - tool_calls:\n      - {name: Bash, id: denied_1, arguments: {command: 'curl http://example.invalid'}}\n  - text: done\n";
    job(
        tmp.path(),
        "fail",
        script,
        "checks: [{name: gate, run: 'false'}]\n",
    );
    let r = run_exporting(tmp.path(), "fail", &c);
    assert_eq!(r.code, 1, "{r:#?}");
    let got = c.received();
    let all = spans(&got);
    let agent = one(&all, "invoke_agent fail");
    assert!(agent.error);
    assert_eq!(agent.attrs["cn_run.status"], "failed");
    assert_eq!(agent.attrs["cn_run.exit_code"], "1");
    assert_eq!(agent.attrs["error.type"], "failed");
    let denied = one(&all, "execute_tool Bash");
    assert!(denied.error);
    assert_eq!(denied.attrs["cn_run.tool.decision"], "denied");
    assert!(!denied.attrs["cn_run.permission.reason"].is_empty());
    assert!(
        named(&all, "bash").is_empty(),
        "a denied call runs no command"
    );
    let check = one(&all, "check gate");
    assert!(check.error);
    assert_eq!(check.attrs["cn_run.check.result"], "failed");
    assert_eq!(check.parent, agent.id);
    assert_eq!(
        counted(&got, "cn_run.run.count", &[("cn_run.status", "failed")]),
        1.0
    );
    assert_eq!(
        counted(
            &got,
            "cn_run.check.count",
            &[("cn_run.check.result", "failed")]
        ),
        1.0
    );
    assert_eq!(
        counted(
            &got,
            "cn_run.tool.call.count",
            &[("cn_run.tool.decision", "denied")]
        ),
        1.0
    );
}

#[test]
fn a_run_stopped_by_a_limit_says_which_in_its_agent_span() {
    let tmp = workspace();
    let c = Collector::start(Wire::HttpProtobuf);
    let script = "turns:\n  - tool_calls:\n      - {name: Bash, arguments: {command: 'echo one'}}\n  - tool_calls:\n      - {name: Bash, arguments: {command: 'echo two'}}\n  - text: done\n";
    job(tmp.path(), "limited", script, "limits: {max_turns: 1}\n");
    let r = run_exporting(tmp.path(), "limited", &c);
    assert_eq!(r.code, 4, "{r:#?}");
    let all = spans(&c.received());
    let agent = one(&all, "invoke_agent limited");
    assert!(agent.error);
    assert_eq!(agent.attrs["cn_run.status"], "limit_reached");
    assert_eq!(agent.attrs["cn_run.limit"], "max_turns");
    assert_eq!(agent.attrs["cn_run.exit_code"], "4");
    assert_eq!(agent.parent, CALLER_SPAN);
}

#[test]
fn a_run_killed_by_sigterm_flushes_everything_before_it_exits() {
    killed_by(rustix::process::Signal::TERM);
}

#[test]
fn a_run_stopped_by_sigint_flushes_everything_before_it_exits() {
    killed_by(rustix::process::Signal::INT);
}

/// A run sent `signal` while its Bash call sleeps: exit 130, and its spans all arrive.
fn killed_by(signal: rustix::process::Signal) {
    let tmp = workspace();
    let c = Collector::start(Wire::HttpProtobuf);
    let script = "turns:\n  - tool_calls:\n      - {name: Bash, id: sleeper, arguments: {command: 'sleep 60'}}\n  - text: done\n";
    job(tmp.path(), "killed", script, "");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("killed.job.yaml")
        .arg("--out")
        .arg(tmp.path().join("out"));
    exporting(&mut cmd, &c, tmp.path());
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let events = tmp.path().join("out/events.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&events)
        .unwrap_or_default()
        .contains("\"tool.started\"")
    {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, signal).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let all = spans(&c.received());
    let agent = one(&all, "invoke_agent killed");
    assert_eq!(agent.attrs["cn_run.status"], "interrupted");
    assert_eq!(agent.attrs["cn_run.exit_code"], "130");
    let tool = one(&all, "execute_tool Bash");
    assert_eq!(tool.parent, agent.id);
    assert!(tool.error, "{tool:#?}");
    let bash = one(&all, "bash");
    assert!(
        bash.error && !bash.attrs.contains_key("process.exit.code"),
        "{bash:#?}"
    );
    assert_eq!(
        counted(
            &c.received(),
            "cn_run.run.count",
            &[("cn_run.status", "interrupted")]
        ),
        1.0
    );
}

#[test]
fn parallel_jobs_are_sibling_agent_spans_under_the_callers_span() {
    let tmp = workspace();
    let c = Collector::start(Wire::HttpProtobuf);
    job(tmp.path(), "alpha", PASSING_SCRIPT, "");
    job(tmp.path(), "beta", "turns:\n  - text: nothing to do\n", "");
    let mut cmd = cn_run(tmp.path());
    cmd.args([
        "alpha.job.yaml",
        "beta.job.yaml",
        "--parallel",
        "2",
        "--out",
    ])
    .arg(tmp.path().join("out"));
    exporting(&mut cmd, &c, tmp.path());
    let output = cmd.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let all = spans(&c.received());
    let agents: Vec<&S> = all
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent"))
        .collect();
    assert_eq!(agents.len(), 2, "{all:#?}");
    assert!(
        agents
            .iter()
            .all(|a| a.parent == CALLER_SPAN && a.trace == CALLER_TRACE)
    );
    assert_ne!(
        agents[0].attrs["cn_run.run.id"],
        agents[1].attrs["cn_run.run.id"]
    );
    let alpha = one(&all, "invoke_agent alpha");
    let beta = one(&all, "invoke_agent beta");
    assert_eq!(one(&all, "execute_tool Bash").parent, alpha.id);
    assert_eq!(
        named(&all, "chat gpt-4.1")
            .iter()
            .filter(|s| s.parent == beta.id)
            .count(),
        1
    );
    assert_eq!(
        named(&all, "chat gpt-4.1")
            .iter()
            .filter(|s| s.parent == alpha.id)
            .count(),
        2
    );
    for name in ["alpha", "beta"] {
        let text =
            std::fs::read_to_string(tmp.path().join("out").join(name).join("result.json")).unwrap();
        let result: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(result["trace_id"], CALLER_TRACE, "{name}");
    }
    assert_eq!(
        counted(
            &c.received(),
            "cn_run.run.count",
            &[("cn_run.status", "success")]
        ),
        2.0
    );
}

/// Runs a passing job against `endpoint` with a 1.5 s export timeout; the wall time.
fn against(endpoint: &str) -> (Run, Duration, tempfile::TempDir) {
    let tmp = workspace();
    job(tmp.path(), "lonely", PASSING_SCRIPT, "");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("lonely.job.yaml")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1500");
    let started = Instant::now();
    let r = run(cmd, Some(&tmp.path().join("out")));
    let took = started.elapsed();
    (r, took, tmp)
}

#[test]
fn an_unreachable_collector_costs_a_warning_and_never_the_outcome() {
    // Held, never listened on: the collector's port refuses every connection.
    let port = crate::support::ports::Port::reserve();
    let (r, took, _tmp) = against(&port.url(""));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["status"], "success");
    assert!(r.stderr.contains("telemetry:"), "{}", r.stderr);
    // The flush is bounded by the 1.5 s export timeout; the margin is generous.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn a_hanging_collector_costs_the_run_at_most_its_bounded_flush_time() {
    let c = Collector::hanging();
    let (r, took, _tmp) = against(&c.endpoint());
    assert!(c.accepted() > 0, "cn-run never reached the collector");
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["status"], "success");
    assert!(r.stderr.contains("telemetry:"), "{}", r.stderr);
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
