//! The spine end to end: the real binary runs jobs on the script provider and leaves the
//! outputs a pipeline reads — exit code, result.json, events.jsonl, stdout formats.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::runner::{cn_run, repo_root, run, write_files};

/// A job dir with `job.yaml` (model block added) and `script.yaml`.
fn job_dir(dir: &Path, job_body: &str, script: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nmodel:\n  provider: script\n  name: test-model\n  script: script.yaml\n  retry: {{max_retries: 2, initial_delay: 10ms}}\n{job_body}"
    );
    write_files(dir, &[("job.yaml", &job), ("script.yaml", script)]);
    dir.join("job.yaml")
}

fn seqs_are_ordered(events: &[Value]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], (i + 1) as u64, "event {i}: {e}");
        assert_eq!(e["schema_version"], 1);
    }
    assert_eq!(events.last().unwrap()["type"], "run.completed");
}

#[test]
fn demo_job_runs_as_the_readme_says() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut cmd = cn_run(tmp.path());
    cmd.arg(repo_root().join("jobs/demo.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "success");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 6);
    assert_eq!(result["total_cost_usd"], 0.0);
    assert_eq!(r.stdout.trim(), result["result"].as_str().unwrap().trim());
    assert!(r.stdout.contains("multiply"));
    // The fix happened in the copy, not in the repository's fixture.
    let fixed = std::fs::read_to_string(out.join("workspace/calc.sh")).unwrap();
    assert!(fixed.contains("$1 * $2"), "{fixed}");
    let original = std::fs::read_to_string(repo_root().join("examples/demo-repo/calc.sh")).unwrap();
    assert!(original.contains("$1 + $2 ))\n}\n") && !original.contains("$1 * $2"));
    let events = r.events();
    seqs_are_ordered(&events);
    assert_eq!(events[0]["type"], "run.started");
    let bash: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool.finished" && e["tool"] == "Bash")
        .collect();
    assert_eq!(bash.len(), 2);
    assert_eq!(bash[0]["status"], "error", "first test run fails");
    assert!(
        bash[0]["output"]
            .as_str()
            .unwrap()
            .contains("FAIL multiply")
    );
    assert_eq!(bash[1]["status"], "ok", "second test run passes");
}

#[test]
fn max_turns_ends_the_run_with_exit_4_and_a_result() {
    let tmp = tempfile::tempdir().unwrap();
    let turn = "  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n";
    let job = job_dir(
        tmp.path(),
        "prompt: loop\nlimits: {max_turns: 3}\n",
        &format!("turns:\n{}", turn.repeat(10)),
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 4, "{r:#?}");
    let result = r.result();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["limit"], "max_turns");
    assert_eq!(result["num_turns"], 3);
    assert_eq!(r.events_of("tool.finished").len(), 3);
    seqs_are_ordered(&r.events());
}

#[test]
fn timeout_ends_a_slow_model_and_a_slow_command_with_exit_4() {
    for script in [
        "turns:\n  - {text: late, delay_ms: 20000}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'sleep 30'}}]\n  - text: never\n",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let job = job_dir(
            tmp.path(),
            "prompt: wait\nlimits: {timeout: 1s}\npermissions: {allow: ['Bash(sleep *)']}\n",
            script,
        );
        let started = Instant::now();
        let mut cmd = cn_run(tmp.path());
        cmd.arg(&job);
        let r = run(cmd, Some(&tmp.path().join("out")));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(r.code, 4, "{r:#?}");
        assert_eq!(r.result()["subtype"], "error_timeout");
        seqs_are_ordered(&r.events());
    }
}

#[test]
fn a_script_that_runs_out_is_a_provider_failure_exit_5() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_dir(
        tmp.path(),
        "prompt: go\n",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 5, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "provider_error");
    assert!(
        result["reason"].as_str().unwrap().contains("no turn left"),
        "{result}"
    );
}

#[test]
fn a_provider_outage_is_retried_then_exit_5() {
    let tmp = tempfile::tempdir().unwrap();
    let err = "  - error: {kind: server, status: 503, message: down}\n";
    let job = job_dir(
        tmp.path(),
        "prompt: go\n",
        &format!("turns:\n{}", err.repeat(3)),
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 5, "{r:#?}");
    assert_eq!(r.events_of("model.retry").len(), 2);
    assert!(r.result()["reason"].as_str().unwrap().contains("503"));
}

#[test]
fn a_retried_outage_that_recovers_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_dir(
        tmp.path(),
        "prompt: go\n",
        "turns:\n  - error: {kind: rate_limited, status: 429, message: slow down, retry_after_ms: 20}\n  - text: fine\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "fine\n");
    assert_eq!(r.events_of("model.retry").len(), 1);
}

#[test]
fn json_and_stream_json_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_dir(
        tmp.path(),
        "prompt: hi\n",
        "turns:\n  - text: hello there\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job).args(["--format", "json"]);
    let r = run(cmd, Some(&tmp.path().join("out1")));
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["type"], "result");
    assert_eq!(v["result"], "hello there");
    assert_eq!(v["session_id"], v["run_id"]);

    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job).args(["--format", "stream-json"]);
    let r = run(cmd, Some(&tmp.path().join("out2")));
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "run.started");
    assert_eq!(lines[lines.len() - 2]["type"], "run.completed");
    assert_eq!(lines.last().unwrap()["type"], "result");
    assert_eq!(
        lines.len() - 1,
        r.events().len(),
        "stdout carries the same events as the file"
    );
}

#[test]
fn adhoc_prompt_runs_without_a_job_file() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path(), &[("s.yaml", "- text: ad hoc answer\n")]);
    let mut cmd = cn_run(tmp.path());
    cmd.args([
        "-p",
        "say something",
        "--provider",
        "script",
        "--script",
        "s.yaml",
    ]);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "ad hoc answer\n");
}

#[test]
fn stdin_prompt_with_dash() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_dir(tmp.path(), "prompt: \"-\"\n", "turns:\n  - text: got it\n");
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job).arg("--out").arg(tmp.path().join("out"));
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"the task from stdin")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let events = std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap();
    let first: Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["prompt"], "the task from stdin");
}
