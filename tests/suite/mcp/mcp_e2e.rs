//! MCP through the binary: a job declares a stdio server; its tools are offered as
//! `mcp__<server>__<tool>`, called by a scripted run, denied by a pattern when the job says
//! so, and the server is gone after the run. A server that never answers fails the run
//! (exit 6) within its start timeout, naming it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::runner::{cn_run, run, write_files};

/// The MCP server the examples build (`examples/mcp_fixture.rs`).
pub(crate) fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

fn job(dir: &Path, servers: &str, permissions: &str, script: &str) -> PathBuf {
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: use the tools\n{permissions}\nmcp_servers:\n{servers}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", script)]);
    dir.join("job.yaml")
}

#[test]
fn mcp_tools_are_called_denied_by_pattern_and_the_server_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = format!("  fx:\n    command: {}\n", fixture().display());
    let script = "turns:
  - tool_calls:
      - {name: mcp__fx__echo, id: e1, arguments: {text: hello mcp}}
      - {name: mcp__fx__pid, id: p1, arguments: {}}
      - {name: mcp__fx__add, id: a1, arguments: {a: 2, b: 3}}
  - text: done
";
    let j = job(
        tmp.path(),
        &servers,
        "permissions: {exclude: ['mcp__fx__add']}",
        script,
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["mcp_servers"][0]["name"], "fx");
    assert_eq!(result["mcp_servers"][0]["status"], "ready");
    let tools: Vec<String> = r.events()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"mcp__fx__echo".to_owned()), "{tools:?}");
    assert!(
        !tools.contains(&"mcp__fx__add".to_owned()),
        "excluded tools are not offered: {tools:?}"
    );
    let finished = r.events_of("tool.finished");
    let out = |id: &str| {
        finished
            .iter()
            .find(|e| e["call_id"] == id)
            .unwrap_or_else(|| panic!("{id}: {finished:#?}"))["output"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(out("e1").contains("hello mcp"));
    assert!(out("a1").contains("Unknown tool"), "{}", out("a1"));
    let pid: String = out("p1").chars().filter(char::is_ascii_digit).collect();
    assert!(!pid.is_empty());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the MCP server outlived the run"
    );
}

#[test]
fn a_server_that_never_answers_fails_the_run_in_time_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = format!(
        "  stuck:\n    command: {}\n    args: [--hang]\n    startup_timeout: 1s\n",
        fixture().display()
    );
    let j = job(tmp.path(), &servers, "", "- text: never\n");
    let started = Instant::now();
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r.code, 6, "{r:#?}");
    let reason = r.result()["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("stuck"), "{reason}");
}

#[test]
fn an_optional_server_that_fails_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = format!(
        "  stuck:\n    command: {}\n    args: [--hang]\n    startup_timeout: 1s\n    optional: true\n",
        fixture().display()
    );
    let j = job(tmp.path(), &servers, "", "- text: fine without it\n");
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["mcp_servers"][0]["status"], "failed");
    assert!(
        r.events_of("warning")
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains("stuck"))
    );
}
