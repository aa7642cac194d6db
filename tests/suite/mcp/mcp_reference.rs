//! cn-run against the protocol's reference servers, as users run them:
//! `@modelcontextprotocol/server-everything` (npm) over stdio and streamable HTTP, and the
//! official Python `mcp-server-time` (PyPI). `.ci/install-mcp-reference` installs the pinned
//! versions under `target/mcp-ref` (or `CN_RUN_MCP_REF`); a machine without them skips these
//! tests with a message saying how to install them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::ports::Port;
use crate::support::runner::{Run, cn_run, repo_root, run, write_files};

fn reference_dir() -> PathBuf {
    std::env::var_os("CN_RUN_MCP_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-ref"))
}

/// The reference server's file, or `None` (with a message) when it is not installed.
fn installed(relative: &str) -> Option<PathBuf> {
    let path = reference_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    eprintln!(
        "skipped: {} is not installed; run .ci/install-mcp-reference (needs node and python3.11)",
        path.display()
    );
    None
}

fn everything() -> Option<PathBuf> {
    installed("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

fn time_server() -> Option<PathBuf> {
    installed("py/bin/mcp-server-time")
}

/// Runs a job with `servers` and one turn of `calls`, with `env` planted in cn-run's own
/// environment.
fn run_job(
    dir: &Path,
    servers: &str,
    permissions: &str,
    calls: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\n{permissions}\nmcp_servers:\n{servers}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(cmd, Some(&dir.join("out")))
}

fn output(r: &Run, id: &str) -> String {
    r.events_of("tool.finished")
        .iter()
        .find(|e| e["call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {r:#?}"))["output"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn denied(r: &Run, id: &str) -> Value {
    r.result()["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool_use_id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

fn stdio_everything(js: &Path) -> String {
    format!(
        "  ev:\n    command: node\n    args: ['{}', stdio]\n    startup_timeout: 60s\n",
        js.display()
    )
}

#[test]
fn everything_over_stdio_read_only_tools_run_and_others_need_a_rule() {
    let Some(js) = everything() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let calls = [
        "{name: mcp__ev__echo, id: echo, arguments: {message: hello reference}}",
        "{name: mcp__ev__get-sum, id: sum, arguments: {a: 20, b: 22}}",
        "{name: mcp__ev__toggle-simulated-logging, id: toggle, arguments: {}}",
        "{name: mcp__ev__gzip-file-as-resource, id: gzip, arguments: {name: x.gz, data: 'data:text/plain,hi'}}",
        "{name: mcp__ev__get-sum, id: bad, arguments: {a: not a number, b: 1}}",
    ];
    let r = run_job(tmp.path(), &stdio_everything(&js), "", &calls, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["mcp_servers"][0]["status"], "ready");
    // A tool with execution.taskSupport "required" is not offered, and the run says so.
    let offered = r.events()[0]["tools"].to_string();
    assert!(offered.contains("mcp__ev__echo"), "{offered}");
    assert!(!offered.contains("simulate-research-query"), "{offered}");
    let message = r.result()["mcp_servers"][0]["message"].to_string();
    assert!(
        message.contains("simulate-research-query") && message.contains("tasks"),
        "{message}"
    );
    assert!(
        output(&r, "echo").contains("hello reference"),
        "{}",
        output(&r, "echo")
    );
    assert!(output(&r, "sum").contains("42"), "{}", output(&r, "sum"));
    for id in ["toggle", "gzip"] {
        let d = denied(&r, id);
        assert_eq!(d["resolution"], "denied", "{id}: {r:#?}");
    }
    assert!(denied(&r, "bad").is_null());
    assert!(!output(&r, "bad").contains("42"), "{}", output(&r, "bad"));
}

#[test]
fn everything_over_stdio_sees_no_planted_secret() {
    let Some(js) = everything() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let planted = [
        ("AWS_SECRET_ACCESS_KEY", "ref-planted-aws"),
        ("GITHUB_TOKEN", "ref-planted-gh"),
        ("NPM_TOKEN", "ref-planted-npm"),
        ("ANTHROPIC_API_KEY", "ref-planted-anthropic"),
        ("SOME_SETTING", "ref-planted-plain"),
    ];
    let r = run_job(
        tmp.path(),
        &stdio_everything(&js),
        "",
        &["{name: mcp__ev__get-env, id: env, arguments: {}}"],
        &planted,
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let env = output(&r, "env");
    assert!(env.contains("PATH"), "{env}");
    for (name, value) in planted {
        assert!(!env.contains(name), "{name} reached the server: {env}");
        assert!(!env.contains(value), "{name}'s value reached the server");
    }
}

/// The everything server on `transport` (streamableHttp or sse), killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_everything(js: &Path, transport: &str, port: &Port) -> Served {
    let child = Command::new("node")
        .arg(js)
        .arg(transport)
        .env("PORT", port.port().to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Served(child)
}

#[test]
fn everything_over_streamable_http_even_when_it_starts_after_the_run() {
    let Some(js) = everything() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let port = Port::reserve();
    // The server is started after cn-run: the run retries until it listens.
    let servers = format!(
        "  web:\n    url: {}\n    startup_timeout: 60s\n",
        port.url("/mcp")
    );
    let calls = [
        "{name: mcp__web__echo, id: echo, arguments: {message: over http}}",
        "{name: mcp__web__get-sum, id: sum, arguments: {a: 1, b: 2}}",
        "{name: mcp__web__toggle-simulated-logging, id: toggle, arguments: {}}",
    ];
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\nmcp_servers:\n{servers}"
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml").arg("--out").arg(tmp.path().join("out"));
    let runner = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _server = serve_everything(&js, "streamableHttp", &port);
    let output_of = runner.wait_with_output().unwrap();
    let r = Run {
        code: output_of.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output_of.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output_of.stderr).into_owned(),
        out: Some(tmp.path().join("out")),
    };
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["mcp_servers"][0]["transport"], "http");
    // The task-only tool is not offered over HTTP either, and the run says so.
    let offered = r.events()[0]["tools"].to_string();
    assert!(offered.contains("mcp__web__echo"), "{offered}");
    assert!(!offered.contains("simulate-research-query"), "{offered}");
    let message = r.result()["mcp_servers"][0]["message"].to_string();
    assert!(
        message.contains("simulate-research-query") && message.contains("tasks"),
        "{message}"
    );
    assert!(output(&r, "echo").contains("over http"));
    assert!(output(&r, "sum").contains('3'));
    assert_eq!(denied(&r, "toggle")["resolution"], "denied");
}

#[test]
fn the_legacy_sse_transport_is_named_with_what_to_use_instead() {
    let Some(js) = everything() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let port = Port::reserve();
    let _server = serve_everything(&js, "sse", &port);
    let servers = format!(
        "  old:\n    url: {}\n    startup_timeout: 30s\n",
        port.url("/sse")
    );
    let r = run_job(
        tmp.path(),
        &servers,
        "",
        &["{name: x, id: x, arguments: {}}"],
        &[],
    );
    assert_eq!(r.code, 6, "{r:#?}");
    let reason = r.result()["reason"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains("\"old\""), "{reason}");
    assert!(reason.contains("HTTP+SSE"), "{reason}");
    assert!(
        reason.contains("stdio") || reason.contains("streamable"),
        "{reason}"
    );
    assert!(!reason.contains("rmcp::"), "a Rust type name in: {reason}");
}

#[test]
fn python_time_server_answers_read_only_calls_with_no_rule() {
    let Some(bin) = time_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let servers = format!(
        "  time:\n    command: '{}'\n    args: [--local-timezone, UTC]\n    startup_timeout: 60s\n",
        bin.display()
    );
    let calls = [
        "{name: mcp__time__get_current_time, id: now, arguments: {timezone: Europe/Paris}}",
        "{name: mcp__time__convert_time, id: conv, arguments: {source_timezone: UTC, time: '12:00', target_timezone: Asia/Tokyo}}",
        "{name: mcp__time__get_current_time, id: bad, arguments: {timezone: Not/AZone}}",
        "{name: mcp__time__get_current_time, id: utc, arguments: {timezone: UTC}}",
        "{name: mcp__time__convert_time, id: ny, arguments: {source_timezone: UTC, time: '00:30', target_timezone: America/New_York}}",
    ];
    let r = run_job(tmp.path(), &servers, "", &calls, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["permission_denials"], serde_json::json!([]));
    assert!(
        output(&r, "now").contains("Europe/Paris"),
        "{}",
        output(&r, "now")
    );
    assert!(
        output(&r, "conv").contains("21:00"),
        "{}",
        output(&r, "conv")
    );
    assert!(
        output(&r, "bad").contains("Not/AZone"),
        "{}",
        output(&r, "bad")
    );
    assert!(output(&r, "utc").contains("UTC"), "{}", output(&r, "utc"));
    assert!(output(&r, "ny").contains("19:30") || output(&r, "ny").contains("20:30"));
}

#[test]
fn everything_resources_are_inlined_with_their_uri_and_images_are_named() {
    let Some(js) = everything() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let calls = [
        "{name: mcp__ev__get-resource-reference, id: t1, arguments: {resourceType: Text, resourceId: 1}}",
        "{name: mcp__ev__get-resource-reference, id: t2, arguments: {resourceType: Text, resourceId: 7}}",
        "{name: mcp__ev__get-resource-reference, id: b1, arguments: {resourceType: Blob, resourceId: 2}}",
        "{name: mcp__ev__get-resource-links, id: links, arguments: {count: 2}}",
        "{name: mcp__ev__get-tiny-image, id: img, arguments: {}}",
    ];
    let r = run_job(tmp.path(), &stdio_everything(&js), "", &calls, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    for (id, n) in [("t1", "1"), ("t2", "7")] {
        let out = output(&r, id);
        assert!(
            out.contains("[resource ") && out.contains(&format!("/{n}]")),
            "{id}: {out}"
        );
    }
    let blob = output(&r, "b1");
    assert!(
        blob.contains("binary resource") && blob.contains("/2"),
        "{blob}"
    );
    // Described by type and size, not dropped.
    assert!(
        blob.contains(" B) not shown") || blob.contains("iB) not shown"),
        "{blob}"
    );
    assert!(
        output(&r, "links").contains("resource link"),
        "{}",
        output(&r, "links")
    );
    // The image goes to the model as an image part (mcp_images_e2e); the text names it.
    assert!(
        output(&r, "img").contains("[image 1: image/png, "),
        "{}",
        output(&r, "img")
    );
}
