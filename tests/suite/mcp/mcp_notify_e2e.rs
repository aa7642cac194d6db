//! Progress and log notifications from MCP servers become `mcp.notification` events, bounded
//! so that a chatty server cannot flood events.jsonl: the fixture's `progress` and `log`
//! tools, a flood of 2,000 log lines, and server-everything's long-running operation.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, repo_root, run, write_files};

fn fixture_server() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    let fixture = bin.parent().unwrap().join("examples/mcp_fixture");
    format!("  fx:\n    command: {}\n", fixture.display())
}

/// The run, and the folder it ran in (its events are read from there).
fn run_calls(servers: &str, calls: &[&str]) -> (Run, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: ['mcp__*']}}\nmcp_servers:\n{servers}"
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    let out = tmp.path().join("out");
    (run(cmd, Some(&out)), tmp)
}

fn notices(r: &Run, kind: &str) -> Vec<Value> {
    r.events_of("mcp.notification")
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

#[test]
fn progress_and_log_notifications_become_events() {
    let (r, _dir) = run_calls(
        &fixture_server(),
        &[
            "{name: mcp__fx__progress, id: p1, arguments: {steps: 6, ms: 300}}",
            "{name: mcp__fx__log, id: l1, arguments: {count: 3}}",
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let progress = notices(&r, "progress");
    assert!(!progress.is_empty() && progress.len() <= 6, "{progress:#?}");
    for e in &progress {
        assert_eq!(e["server"], "fx");
        assert_eq!(e["call_id"], "p1", "{e}");
        let step = e["progress"].as_f64().unwrap();
        assert!((1.0..=6.0).contains(&step), "{e}");
    }
    let logs = notices(&r, "log");
    let lines: Vec<&str> = logs
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "fixture log line 1",
            "fixture log line 2",
            "fixture log line 3"
        ]
    );
    assert!(
        logs.iter()
            .all(|e| e["level"] == "warning" && e["server"] == "fx")
    );
}

#[test]
fn a_flood_of_notifications_is_cut_at_the_limit_and_says_so() {
    let (r, _dir) = run_calls(
        &fixture_server(),
        &[
            "{name: mcp__fx__log, id: l1, arguments: {count: 2000}}",
            "{name: mcp__fx__progress, id: p1, arguments: {steps: 1000, ms: 0}}",
            "{name: mcp__fx__echo, id: e1, arguments: {text: still answering}}",
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let all = r.events_of("mcp.notification");
    assert_eq!(all.len(), 201, "{} notification events", all.len());
    let suppressed = notices(&r, "suppressed");
    assert_eq!(suppressed.len(), 1, "{suppressed:#?}");
    assert!(suppressed[0]["message"].as_str().unwrap().contains("200"));
    assert!(r.events().len() < 260, "{} events in all", r.events().len());
    let echo = r
        .events_of("tool.finished")
        .into_iter()
        .find(|e| e["call_id"] == "e1")
        .unwrap();
    assert!(echo["output"].as_str().unwrap().contains("still answering"));
}

#[test]
fn server_everythings_long_running_operation_reports_progress() {
    let dir = std::env::var_os("CN_RUN_MCP_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-ref"));
    let js = dir.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        eprintln!(
            "skipped: {} is not installed; run .ci/install-mcp-reference",
            js.display()
        );
        return;
    }
    let servers = format!(
        "  ev:\n    command: node\n    args: ['{}', stdio]\n    startup_timeout: 60s\n",
        js.display()
    );
    let (r, _dir) = run_calls(
        &servers,
        &[
            "{name: mcp__ev__trigger-long-running-operation, id: long, arguments: {duration: 3, steps: 5}}",
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let progress = notices(&r, "progress");
    assert!(!progress.is_empty() && progress.len() <= 5, "{progress:#?}");
    for e in &progress {
        assert_eq!(e["server"], "ev");
        assert_eq!(e["call_id"], "long");
        assert_eq!(e["total"], 5.0, "{e}");
    }
    // The last step (progress == total) is always recorded.
    assert_eq!(progress.last().unwrap()["progress"], 5.0, "{progress:#?}");
}
