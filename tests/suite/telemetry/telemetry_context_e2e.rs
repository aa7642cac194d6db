//! The trace context leaves cn-run only where it should: MCP servers are told the span of
//! each call (`_meta.traceparent` over stdio and HTTP, and a `traceparent` header over
//! HTTP) — the same span the collector receives — while no command, check or MCP server
//! inherits `OTEL_*` or `TRACEPARENT`. Content (prompts, tool arguments and output) reaches
//! the collector only when the job or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
//! opts in, redacted and capped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::otlp::{Collector, Received, Wire, attrs, text};
use crate::support::runner::{Run, cn_run, git_init, run, write_files};

const CALLER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The MCP fixture serving streamable HTTP on a free port (killed on drop).
struct HttpFixture(
    std::process::Child,
    String,
    // Held, not read: the port stays reserved while the fixture listens on it.
    #[allow(dead_code)] crate::support::ports::Port,
);

impl HttpFixture {
    fn start() -> HttpFixture {
        let reserved = crate::support::ports::Port::reserve();
        let port = reserved.port();
        let child = Command::new(fixture())
            .args(["--http", &port.to_string()])
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the HTTP fixture did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpFixture(child, reserved.url("/mcp"), reserved)
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn exporting(cmd: &mut Command, c: &Collector) {
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", c.endpoint())
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-otlp-key=planted-otlp-key-77",
        )
        .env("TRACEPARENT", CALLER)
        .env("TRACESTATE", "vendor=opaque");
}

fn output_of(r: &Run, id: &str) -> String {
    let finished = r.events_of("tool.finished");
    let event = finished.iter().find(|e| e["call_id"] == id);
    let event = event.unwrap_or_else(|| panic!("{id}: {finished:#?}"));
    event["output"].as_str().unwrap().to_owned()
}

/// The span id of the `tools/call` span the collector got for call `id`.
fn mcp_span(got: &Received, id: &str) -> (String, String) {
    let spans = got.spans();
    let (_, span) = spans
        .iter()
        .find(|(_, s)| {
            s.name.starts_with("tools/call") && attrs(&s.attributes)["gen_ai.tool.call.id"] == id
        })
        .unwrap_or_else(|| panic!("no tools/call span for {id}"));
    (hex(&span.span_id), hex(&span.parent_span_id))
}

#[test]
fn mcp_servers_are_told_the_span_of_each_call_the_collector_receives() {
    let tmp = tempfile::tempdir().unwrap();
    git_init(tmp.path());
    let web = HttpFixture::start();
    let c = Collector::start(Wire::HttpProtobuf);
    let script = "turns:\n  - tool_calls:\n      - {name: mcp__fx__trace_context, id: m1}\n      - {name: mcp__web__trace_context, id: m2}\n      - {name: mcp__web__header, id: m3, arguments: {name: traceparent}}\n      - {name: mcp__fx__env, id: m4, arguments: {name: OTEL_EXPORTER_OTLP_ENDPOINT}}\n      - {name: mcp__fx__env, id: m5, arguments: {name: TRACEPARENT}}\n      - {name: mcp__fx__env, id: m6, arguments: {name: HOME}}\n  - text: done\n";
    let job = format!(
        "version: 1\nname: traced\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: ['mcp__*']}}\nmcp_servers:\n  fx:\n    command: {}\n  web:\n    url: {}\n",
        fixture().display(),
        web.1
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    exporting(&mut cmd, &c);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let got = c.received();
    let spans = got.spans();
    for id in ["m1", "m2", "m3"] {
        let (span, parent) = mcp_span(&got, id);
        let expected = format!("00-{CALLER_TRACE}-{span}-01");
        let told = if id == "m3" {
            output_of(&r, id)
        } else {
            let out = output_of(&r, id);
            assert!(out.ends_with(" tracestate=vendor=opaque"), "{out}");
            out.trim_start_matches("traceparent=")
                .trim_end_matches(" tracestate=vendor=opaque")
                .to_owned()
        };
        assert_eq!(
            told, expected,
            "{id}: _meta (m1 stdio, m2 HTTP) or the HTTP header (m3)"
        );
        let tool = spans
            .iter()
            .find(|(_, s)| hex(&s.span_id) == parent)
            .unwrap();
        assert!(
            tool.1.name.starts_with("execute_tool mcp__"),
            "{}",
            tool.1.name
        );
    }
    assert_eq!(output_of(&r, "m4"), "(unset)");
    assert_eq!(output_of(&r, "m5"), "(unset)");
    assert_eq!(
        output_of(&r, "m6"),
        tmp.path().display().to_string(),
        "the control"
    );
}

#[test]
fn without_export_mcp_servers_get_the_callers_own_trace_context() {
    let tmp = tempfile::tempdir().unwrap();
    let script =
        "turns:\n  - tool_calls:\n      - {name: mcp__fx__trace_context, id: m1}\n  - text: done\n";
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: ['mcp__*']}}\nmcp_servers:\n  fx:\n    command: {}\n",
        fixture().display()
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml").env("TRACEPARENT", CALLER);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        output_of(&r, "m1"),
        format!("traceparent={CALLER} tracestate=(absent)")
    );
    assert_eq!(r.result()["trace_id"], CALLER_TRACE);
    let mut plain = cn_run(tmp.path());
    plain.arg("job.yaml");
    let r = run(plain, Some(&tmp.path().join("out2")));
    assert_eq!(
        output_of(&r, "m1"),
        "traceparent=(absent) tracestate=(absent)",
        "the control"
    );
    assert!(r.result().get("trace_id").is_none());
}

/// Runs a job whose Bash call and check print their environment, with `extra` job lines.
fn env_run(tmp: &Path, extra: &str, c: &Collector) -> Run {
    let script = "turns:\n  - tool_calls:\n      - {name: Bash, id: env, arguments: {command: 'env'}}\n  - text: done\n";
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: ['Bash(env)']}}\nchecks: [{{name: clean, run: \"test -z \\\"$(env | grep -E '^(OTEL_|TRACEPARENT|TRACESTATE)')\\\"\"}}]\n{extra}"
    );
    write_files(tmp, &[("job.yaml", &job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp);
    cmd.arg("job.yaml")
        .env("FOO_CONTROL", "visible")
        .env("OTEL_SERVICE_NAME", "svc");
    exporting(&mut cmd, c);
    run(cmd, Some(&tmp.join("out")))
}

#[test]
fn no_command_or_check_inherits_otel_variables_or_the_trace_context() {
    let c = Collector::start(Wire::HttpProtobuf);
    for extra in [
        "tools: {bash: {sandbox: off}}\n",
        "tools: {bash: {env: ['OTEL_*', 'TRACE*', FOO_CONTROL]}}\n",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let r = env_run(tmp.path(), extra, &c);
        assert_eq!(r.code, 0, "{extra}: {r:#?}");
        let env = output_of(&r, "env");
        assert!(
            env.contains("FOO_CONTROL=visible"),
            "the control, {extra}: {env}"
        );
        for name in ["OTEL_", "TRACEPARENT", "TRACESTATE", "planted-otlp-key"] {
            assert!(
                !env.contains(name),
                "{name} reached a command ({extra}): {env}"
            );
        }
        assert_eq!(
            r.result()["checks"][0]["passed"],
            true,
            "{extra}: a check saw OTEL_*"
        );
    }
}

/// Every text the collector received, as one string.
fn everything(got: &Received) -> String {
    let mut all = String::new();
    for (_, s) in got.spans() {
        all.push_str(&format!("{} {:?}\n", s.name, attrs(&s.attributes)));
    }
    for l in got.log_records() {
        all.push_str(&format!(
            "{} {:?} {}\n",
            l.event_name,
            attrs(&l.attributes),
            text(l.body.as_ref())
        ));
    }
    all
}

/// A run whose prompt, tool argument and tool output hold a planted secret and a long text.
fn content_run(capture_env: bool, capture_job: bool) -> Received {
    let tmp = tempfile::tempdir().unwrap();
    let c = Collector::start(Wire::HttpProtobuf);
    let long = "x".repeat(3000);
    let script = format!(
        "turns:\n  - tool_calls:\n      - {{name: Bash, id: b1, arguments: {{command: 'echo arg-$PLANTED_SECRET {long}'}}}}\n  - text: answer-marker\n"
    );
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: prompt-marker planted-content-secret-99\npermissions: {{allow: ['Bash(echo *)']}}\nredact: [PLANTED_SECRET]\ntools: {{bash: {{env: [PLANTED_SECRET]}}}}\ntelemetry: {{capture_content: {capture_job}}}\n"
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml")
        .env("PLANTED_SECRET", "planted-content-secret-99")
        .env("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "1000");
    if capture_env {
        cmd.env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
    }
    exporting(&mut cmd, &c);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    c.received()
}

#[test]
fn content_goes_out_only_when_opted_in_and_then_redacted_and_capped() {
    let off = everything(&content_run(false, false));
    for marker in ["prompt-marker", "answer-marker", "echo arg-"] {
        assert!(!off.contains(marker), "{marker} left without opt-in: {off}");
    }
    for (env, job) in [(true, false), (false, true)] {
        let got = content_run(env, job);
        let all = everything(&got);
        for marker in ["prompt-marker", "answer-marker", "echo arg-"] {
            assert!(
                all.contains(marker),
                "{marker} missing (env {env}, job {job})"
            );
        }
        assert!(
            !all.contains("planted-content-secret-99"),
            "the secret left (env {env}, job {job})"
        );
        let spans = got.spans();
        let (_, tool) = spans
            .iter()
            .find(|(_, s)| s.name == "execute_tool Bash")
            .unwrap();
        let args = &attrs(&tool.attributes)["gen_ai.tool.call.arguments"];
        assert!(
            args.len() < 1100 && args.contains("more bytes]"),
            "not capped: {} bytes",
            args.len()
        );
    }
}
