//! Sessions: session.jsonl appended at every step; `--resume` continues a run — also one killed
//! with SIGKILL — without losing a turn or running one twice.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::procs;
use crate::support::runner::{cn_run, run, run_folder, session_of, write_files};

const JOB: &str = "version: 1\nname: resumable\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: count\npermissions: {allow: ['Bash(echo *)']}\n";
const SCRIPT: &str = "turns:
  - tool_calls: [{name: Bash, id: a, arguments: {command: 'echo one >> log.txt'}}]
  - tool_calls: [{name: Bash, id: b, arguments: {command: 'echo two >> log.txt; sleep 29'}}]
  - tool_calls: [{name: Bash, id: c, arguments: {command: 'echo three >> log.txt'}}]
  - text: counted to three
";

fn session(dir: &Path) -> (std::path::PathBuf, Value) {
    let run_dir = run_folder(dir);
    let s = session_of(&run_dir);
    (run_dir, s)
}

#[test]
fn a_run_killed_with_sigkill_resumes_without_losing_or_repeating_a_turn() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", SCRIPT)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let log = tmp.path().join("log.txt");
    let reached = procs::wait_for(|| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("two")
    });
    assert!(reached, "the run never reached turn 2");
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap(); // SIGKILL: no handler runs, nothing is flushed by us
    child.wait().unwrap();
    // The killed run's `sleep 29` is still running in this test's workspace: end it by pid.
    procs::kill_in_dir(tmp.path());

    let (run_dir, s) = session(tmp.path());
    assert_eq!(s["state"], "running");
    assert_eq!(s["in_flight"], serde_json::json!(["b"]), "{s}");
    let run_id = s["session_id"].as_str().unwrap().to_owned();

    let mut cmd = cn_run(tmp.path());
    cmd.args(["--resume", "latest", "--format", "json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["run_id"], run_id.as_str());
    assert_eq!(result["result"], "counted to three");
    // Turn 1 was not redone, the killed call was not run again, turn 3 ran once.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\nthree\n");
    let (_, s) = session(tmp.path());
    assert_eq!(s["state"], "finished");
    let history = s["history"].as_array().unwrap();
    let interrupted = history.iter().find(|m| m["tool_call_id"] == "b").unwrap();
    assert!(
        interrupted["content"].as_str().unwrap().contains("killed"),
        "{interrupted}"
    );
    let assistants = history.iter().filter(|m| m["role"] == "assistant").count();
    assert_eq!(assistants, 4, "every scripted turn exactly once");
    // One event stream across both processes, numbered without gaps.
    let events: Vec<Value> = std::fs::read_to_string(run_dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], (i + 1) as u64, "{e}");
    }
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "run.started")
        .collect();
    assert_eq!(started.len(), 2);
    assert_eq!(started[1]["resumed"], true);
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "run.completed")
            .count(),
        1
    );
}

#[test]
fn a_finished_run_needs_a_new_instruction_to_continue() {
    let tmp = tempfile::tempdir().unwrap();
    let script = "turns:\n  - text: first answer\n  - text: second answer\n";
    write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    assert_eq!(run(cmd, None).code, 0);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["--resume", "latest"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already finished"), "{}", r.stderr);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["--resume", "latest", "-p", "and now?"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "second answer\n");
}

#[test]
fn sessions_list_and_show() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", "- text: hi\n")]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    assert_eq!(run(cmd, None).code, 0);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["sessions", "list", "--json"]);
    let r = run(cmd, None);
    let rows: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(rows[0]["job"], "resumable");
    assert_eq!(rows[0]["status"], "success");
    let mut cmd = cn_run(tmp.path());
    cmd.args(["sessions", "show", "latest"]);
    let r = run(cmd, None);
    assert!(r.stdout.contains("user: count"), "{}", r.stdout);
    assert!(r.stdout.contains("assistant: hi"), "{}", r.stdout);
}

#[test]
fn an_interrupted_run_writes_its_result_and_session_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let script = "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'sleep 31'}}]\n  - text: never\n";
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: wait\npermissions: {allow: ['Bash(sleep *)']}\n",
            ),
            ("s.yaml", script),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml")
        .arg("--out")
        .arg(tmp.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let started = procs::wait_for(|| {
        std::fs::read_to_string(tmp.path().join("out/events.jsonl"))
            .unwrap_or_default()
            .contains("tool.started")
    });
    assert!(started, "the call never started");
    let sleeping = procs::wait_for(|| {
        procs::in_dir(tmp.path())
            .iter()
            .any(|p| p.cmdline == "sleep 31")
    });
    let pid = child.id().to_string();
    let signalled = Instant::now();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The signal binds: the run did not wait for the 31 s command (a bound far from both).
    assert!(signalled.elapsed() < Duration::from_secs(25));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("out/result.json")).unwrap())
            .unwrap();
    assert_eq!(result["status"], "interrupted");
    assert_eq!(result["exit_code"], 130);
    assert!(tmp.path().join("out/session.jsonl").is_file());
    // The command the agent started (it was running in the workspace when the signal came)
    // did not outlive the run.
    assert!(sleeping, "the run's `sleep 31` was never seen running");
    let left = procs::in_dir(tmp.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}
