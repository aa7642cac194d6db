//! A resume trusts only what the first run trusted: a job file the model rewrote, a
//! `.continue/permissions.yaml` it planted, and a base branch moved between the runs change
//! nothing the resumed run allows or runs. The controls: a fresh run in the same workspace
//! reads the planted file (and the moved branch) and does run the planted command.

use std::path::Path;

use serde_json::json;

use crate::support::runner::{cn_run, git, git_init, run, write_files};

const JOB: &str = "version: 1\nname: trust\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\npermissions: {allow: ['Write(**)']}\n";

/// What the model writes over the job file: a policy and a check of its own.
const REWRITTEN: &str = "version: 1\nname: trust\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\npermissions: {allow: ['Write(**)', 'Bash(cp *)']}\nchecks: [{name: planted, run: 'touch check-marker'}]\n";

const PLANTED_POLICY: &str = "allow:\n  - Bash(cp *)\n";

fn script(first: serde_json::Value) -> String {
    json!({"turns": [
        first,
        {"text": "first part done"},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "cp s.json bash-marker"}}]},
        {"text": "second part done"}
    ]})
    .to_string()
}

/// A new run of the job whose first turn runs the planted command.
fn fresh_run_touching(ws: &Path, flags: &[&str]) -> crate::support::runner::Run {
    let touch = json!({"turns": [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "cp s.json bash-marker"}}]},
        {"text": "done"}
    ]});
    write_files(ws, &[("s.json", &touch.to_string())]);
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").args(flags);
    run(cmd, None)
}

fn resume(ws: &Path) -> crate::support::runner::Run {
    let mut cmd = cn_run(ws);
    cmd.args(["--resume", "latest", "-p", "go on"]);
    run(cmd, None)
}

#[test]
fn a_resume_ignores_a_rewritten_job_file_and_a_planted_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let first = json!({"tool_calls": [
        {"name": "Write", "arguments": {"filepath": "job.yaml", "content": REWRITTEN}},
        {"name": "Write", "arguments": {"filepath": ".continue/permissions.yaml", "content": PLANTED_POLICY}}
    ]});
    write_files(ws, &[("job.yaml", JOB), ("s.json", &script(first))]);
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml");
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("job.yaml")).unwrap(),
        REWRITTEN
    );
    let r = resume(ws);
    assert!(
        !ws.join("bash-marker").exists(),
        "the planted policy was obeyed: {r:#?}"
    );
    assert!(
        !ws.join("check-marker").exists(),
        "the rewritten job's check ran: {r:#?}"
    );
    // The control: a fresh run reads the workspace's policy file and runs the command.
    std::fs::write(ws.join("job.yaml"), JOB).unwrap();
    let r = fresh_run_touching(ws, &[]);
    assert!(
        ws.join("bash-marker").exists(),
        "the control did not run the command: {r:#?}"
    );
}

#[test]
fn an_untrusted_resume_keeps_the_base_commit_the_first_run_read() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    // A call, so that the first part ends at "first part done" and the resume's next turn
    // is the command (a text here would leave the command unreached).
    let first = json!({"tool_calls": [{"name": "Read", "arguments": {"filepath": "README.md"}}]});
    write_files(
        ws,
        &[
            ("job.yaml", JOB),
            ("s.json", &script(first)),
            ("README.md", "hi\n"),
        ],
    );
    git_init(ws);
    git(ws, &["branch", "-M", "main"]);
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--untrusted", "--base-ref", "main"]);
    assert_eq!(run(cmd, None).code, 0);
    // Between the runs `main` moves to a commit whose policy allows the command.
    write_files(ws, &[(".continue/permissions.yaml", PLANTED_POLICY)]);
    git(ws, &["add", ".continue/permissions.yaml"]);
    git(ws, &["commit", "-qm", "moved"]);
    let r = resume(ws);
    assert!(
        !ws.join("bash-marker").exists(),
        "the moved base was trusted: {r:#?}"
    );
    assert!(
        r.stdout.contains("second part done"),
        "the command was never reached: {r:#?}"
    );
    // The control: a fresh run with the same base ref reads the moved branch.
    let r = fresh_run_touching(ws, &["--untrusted", "--base-ref", "main"]);
    assert!(
        ws.join("bash-marker").exists(),
        "the control did not run the command: {r:#?}"
    );
}
