//! Deferred approval end to end on the scripted provider: a call that needs a person
//! (`on_ask: defer`, or a PreToolUse hook's `defer`) ends the run with exit 3 and the call
//! pending in result.json; `--resume RUN --approve ID` runs exactly that call and the run
//! goes on; `--deny ID --reason TEXT` tells the model and the call never runs.

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, repo_root, run, session_of, write_files};

fn setup(ws: &Path, rest: &str, turns: &str) {
    let hooks = ws.join(".hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for name in ["guard.py", "record.sh"] {
        std::fs::copy(
            repo_root().join("tests/fixtures/hooks").join(name),
            hooks.join(name),
        )
        .unwrap();
    }
    let job = format!(
        "version: 1\nname: gated\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: ship it\n{rest}"
    );
    write_files(
        ws,
        &[("job.yaml", &job), ("s.yaml", &format!("turns:\n{turns}"))],
    );
}

fn start(ws: &Path) -> Run {
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml");
    run(cmd, Some(&ws.join("out")))
}

fn resume(ws: &Path, extra: &[&str]) -> Run {
    let mut cmd = cn_run(ws);
    cmd.args(["--resume", "out"]).args(extra);
    run(cmd, Some(&ws.join("out")))
}

fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

const TURNS: &str = "  - tool_calls: [{name: Bash, id: deploy1, arguments: {command: 'echo shipped > deploy.txt'}}]\n  - text: deployed\n";

fn pending(r: &Run) -> Vec<Value> {
    r.result()["pending_approvals"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_hooks_defer_stops_the_run_and_an_approval_runs_exactly_that_call() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hook = format!("{} .hooks/guard.py", python());
    let hooks = format!(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{{type: command, command: '{hook}'}}]\n"
    );
    setup(ws, &hooks, TURNS);
    let r = start(ws);
    assert_eq!(r.code, 3, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "approval_required", "{result}");
    assert!(
        !ws.join("deploy.txt").exists(),
        "a deferred call does not run"
    );
    let p = pending(&r);
    assert_eq!(p.len(), 1, "{result}");
    assert_eq!(p[0]["tool_use_id"], "deploy1");
    assert_eq!(p[0]["tool_name"], "Bash");
    assert_eq!(p[0]["tool_input"]["command"], "echo shipped > deploy.txt");
    assert_eq!(p[0]["reason"], "deploys need a human");
    assert_eq!(p[0]["source"], "hook");
    // An approval of a call that is not pending is refused, and nothing runs.
    let wrong = resume(ws, &["--approve", "nope"]);
    assert_eq!(wrong.code, 2, "{wrong:#?}");
    assert!(wrong.stderr.contains("nope"), "{}", wrong.stderr);
    assert!(!ws.join("deploy.txt").exists());
    let r = resume(ws, &["--approve", "deploy1"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("deploy.txt")).unwrap(),
        "shipped\n"
    );
    let result = r.result();
    assert_eq!(result["result"], "deployed");
    assert!(pending(&r).is_empty(), "{result}");
    let log = std::fs::read_to_string(ws.join("guard.log")).unwrap();
    assert_eq!(
        log.lines().count(),
        1,
        "the approval answered the hook: {log}"
    );
    let session = session_of(&ws.join("out"));
    let history = session["history"].as_array().unwrap();
    let answers = history
        .iter()
        .filter(|m| m["tool_call_id"] == "deploy1")
        .count();
    assert_eq!(answers, 1, "one result for the call: {history:?}");
}

#[test]
fn on_ask_defer_waits_and_a_denial_tells_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let turns = "  - tool_calls: [{name: Bash, id: m1, arguments: {command: 'echo built > built.txt; make deploy'}}]\n  - text: understood\n";
    let record =
        "hooks:\n  Notification:\n    - hooks: [{type: command, command: sh .hooks/record.sh}]\n";
    setup(
        ws,
        &format!("permissions: {{on_ask: defer}}\n{record}"),
        turns,
    );
    let r = start(ws);
    assert_eq!(r.code, 3, "{r:#?}");
    let p = pending(&r);
    assert_eq!(p[0]["tool_use_id"], "m1", "{p:?}");
    assert_eq!(p[0]["permission"], "ask");
    assert!(
        p[0]["allow_hint"].is_string(),
        "the rule that would allow it: {p:?}"
    );
    let note = std::fs::read_to_string(ws.join("hooks.log")).unwrap();
    assert!(note.starts_with("Notification "), "{note}");
    let r = resume(ws, &["--deny", "m1", "--reason", "not during the freeze"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!ws.join("built.txt").exists(), "a denied call never runs");
    let session = session_of(&ws.join("out"));
    let history = session["history"].to_string();
    assert!(history.contains("not during the freeze"), "{history}");
    assert_eq!(r.result()["result"], "understood");
    // Control: the same call approved runs.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, "permissions: {on_ask: defer}\n", turns);
    assert_eq!(start(ws).code, 3);
    assert_eq!(resume(ws, &["--approve", "m1"]).code, 0);
    assert!(ws.join("built.txt").exists());
}

#[test]
fn a_disabled_command_is_denied_at_once_never_deferred() {
    // The call is pending under one policy; the resume re-checks it, and an exclude
    // (here: the job's own, recorded with the run) still wins over a person's approval.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let turns = "  - tool_calls: [{name: Bash, id: x1, arguments: {command: 'chmod u+s t; echo ran > marker.txt'}}]\n  - text: ok\n";
    setup(ws, "permissions: {on_ask: defer}\n", turns);
    let r = start(ws);
    // A disabled command is denied at once: nothing is pending.
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(pending(&r).is_empty());
    assert!(!ws.join("marker.txt").exists());
}

#[test]
fn the_step_summary_lists_the_waiting_calls_and_how_to_answer_them() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(
        ws,
        "permissions: {on_ask: defer}\n",
        "  - tool_calls: [{name: Bash, id: m7, arguments: {command: 'make deploy'}}]\n  - text: ok\n",
    );
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", ws.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", ws.join("gh_summary"));
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 3, "{r:#?}");
    let summary = std::fs::read_to_string(ws.join("gh_summary")).unwrap();
    assert!(summary.contains("Waiting for approval"), "{summary}");
    assert!(
        summary.contains("`m7`") && summary.contains("make deploy"),
        "{summary}"
    );
    assert!(summary.contains("--approve m7"), "{summary}");
    let outputs = std::fs::read_to_string(ws.join("gh_output")).unwrap();
    assert!(outputs.contains("approval_required"), "{outputs}");
}

/// The README's two-job workflow: the first job's run waits for approval in checkout `a`;
/// its run folder is uploaded (moved away) and the second job, in a fresh clone `b`,
/// approves the call. The first part's change is written into `b`, exactly the approved
/// call runs there, and `a` is left as the first job left it.
#[test]
fn an_approval_resumes_a_deferred_run_moved_to_another_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    let hook = format!("{} .hooks/guard.py", python());
    let rest = format!(
        "permissions: {{allow: ['Bash(echo *)']}}\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{{type: command, command: '{hook}'}}]\n"
    );
    let turns = "  - tool_calls: [{name: Bash, id: first, arguments: {command: 'echo first > notes.txt'}}]\n  - tool_calls: [{name: Bash, id: deploy1, arguments: {command: 'echo deploy > deploy.txt'}}]\n  - text: deployed\n";
    setup(&a, &rest, turns);
    write_files(&a, &[(".gitignore", ".cn-run/\nguard.log\n")]);
    crate::support::runner::git_init(&a);
    let folder = a.join(".cn-run/first");
    let mut cmd = cn_run(&a);
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&folder));
    assert_eq!(r.code, 3, "{r:#?}");
    assert_eq!(pending(&r)[0]["tool_use_id"], "deploy1", "{}", r.result());
    crate::support::runner::git(
        tmp.path(),
        &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    let moved = tmp.path().join("artifact/run");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&folder, &moved).unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.arg("--resume")
        .arg(&moved)
        .arg("-C")
        .arg(&b)
        .args(["--approve", "deploy1"]);
    let r = run(cmd, Some(&moved));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["result"], "deployed", "{result}");
    assert!(pending(&r).is_empty(), "{result}");
    assert_eq!(
        std::fs::read_to_string(b.join("notes.txt")).unwrap(),
        "first\n"
    );
    assert_eq!(
        std::fs::read_to_string(b.join("deploy.txt")).unwrap(),
        "deploy\n"
    );
    assert!(
        !a.join("deploy.txt").exists(),
        "the first checkout is untouched"
    );
    let guard = std::fs::read_to_string(b.join("guard.log")).unwrap_or_default();
    assert!(
        !guard.contains("deploy"),
        "the approval answered the call, not the hook: {guard}"
    );
}
