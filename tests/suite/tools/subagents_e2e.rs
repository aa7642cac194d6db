//! Subagents: a nested agent runs with its own conversation, never with wider permissions
//! than the run, its events tagged with the parent call id, its turns counted in the run's.

use std::path::Path;

use crate::support::runner::{Run, cn_run, run, write_files};

fn run_job(dir: &Path, job_rest: &str, script: &str) -> Run {
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: delegate\n{job_rest}"
    );
    write_files(
        dir,
        &[
            ("job.yaml", &job),
            ("s.yaml", script),
            ("notes.txt", "secret plan: ship it\n"),
        ],
    );
    let mut cmd = cn_run(dir);
    cmd.arg(dir.join("job.yaml")).arg("-C").arg(dir);
    run(cmd, Some(&dir.join("out")))
}

const SUBAGENTS: &str = "subagents:
  - name: worker
    description: Runs commands.
    system_prompt: You run shell commands.
    tools: [Bash, Read]
";

#[test]
fn a_subagent_cannot_do_what_the_run_excludes() {
    let tmp = tempfile::tempdir().unwrap();
    let script = "turns:
  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: run it, prompt: run echo hi}}]
  - tool_calls: [{name: Bash, id: b1, arguments: {command: 'echo hi > ran.txt'}}]
  - text: I was not allowed to run Bash.
  - text: The worker could not run the command.
";
    let r = run_job(
        tmp.path(),
        &format!("permissions: {{exclude: [Bash]}}\n{SUBAGENTS}"),
        script,
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        !tmp.path().join("ran.txt").exists(),
        "Bash ran inside the subagent"
    );
    let events = r.events();
    let nested: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["parent_call_id"] == "sub1")
        .collect();
    assert!(nested.iter().any(|e| e["type"] == "turn.started"));
    let bash = nested
        .iter()
        .find(|e| e["type"] == "tool.finished" && e["call_id"] == "b1")
        .unwrap();
    assert_eq!(bash["status"], "error", "{bash}");
    let sub = r
        .events_of("tool.finished")
        .into_iter()
        .find(|e| e["call_id"] == "sub1")
        .unwrap();
    assert!(
        sub["output"]
            .as_str()
            .unwrap()
            .contains("I was not allowed to run Bash."),
        "{sub}"
    );
    assert_eq!(
        r.result()["num_turns"],
        4,
        "the subagent's two turns count toward the run"
    );
}

#[test]
fn a_subagents_own_allow_rule_never_widens_the_runs_policy() {
    let tmp = tempfile::tempdir().unwrap();
    // The run asks (and so denies) for commands the evaluator cannot prove safe; the
    // subagent's own `Bash(*)` would allow anything, but the stricter verdict wins.
    let script = "turns:
  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: fetch, prompt: fetch it}}]
  - tool_calls: [{name: Bash, id: b1, arguments: {command: 'curl -s https://example.invalid > got.txt'}}]
  - text: denied
  - text: done
";
    let subs = "subagents:\n  - {name: worker, description: Runs., system_prompt: Run., tools: ['Bash(*)']}\n";
    let r = run_job(tmp.path(), subs, script);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!tmp.path().join("got.txt").exists());
    let d = &r.result()["permission_denials"][0];
    assert_eq!(d["tool_name"], "Bash");
    assert_eq!(d["tool_use_id"], "b1");
    assert_eq!(d["resolution"], "denied");
}

#[test]
fn a_subagent_works_within_its_own_tools_and_returns_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let script = "turns:
  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: reader, description: read, prompt: read notes.txt}}]
  - tool_calls: [{name: Read, arguments: {filepath: notes.txt}}, {name: List, arguments: {dirpath: .}}]
  - text: The notes say to ship it.
  - text: Done; the reader says ship it.
";
    let subs = "subagents:\n  - {name: reader, description: Reads files., system_prompt: Read carefully., tools: [Read], max_turns: 3}\n";
    let r = run_job(tmp.path(), subs, script);
    assert_eq!(r.code, 0, "{r:#?}");
    let finished = r.events_of("tool.finished");
    let read = finished.iter().find(|e| e["tool"] == "Read").unwrap();
    assert_eq!(read["parent_call_id"], "sub1");
    assert_eq!(read["status"], "ok");
    let list = finished.iter().find(|e| e["tool"] == "List").unwrap();
    assert_eq!(
        list["status"], "error",
        "List is not among the reader's tools"
    );
    let sub = finished.iter().find(|e| e["call_id"] == "sub1").unwrap();
    let out = sub["output"].as_str().unwrap();
    assert!(
        out.contains("ship it") && out.contains("status: completed"),
        "{out}"
    );
    assert_eq!(r.stdout, "Done; the reader says ship it.\n");
}

#[test]
fn subagent_turns_share_the_run_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let script = "turns:
  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: reader, description: loop, prompt: keep listing}}]
  - tool_calls: [{name: Read, arguments: {filepath: notes.txt}}]
  - tool_calls: [{name: Read, arguments: {filepath: notes.txt}}]
  - tool_calls: [{name: Read, arguments: {filepath: notes.txt}}]
  - text: never
";
    let subs = "limits: {max_turns: 3}\nsubagents:\n  - {name: reader, description: Reads., system_prompt: Read., tools: [Read]}\n";
    let r = run_job(tmp.path(), subs, script);
    assert_eq!(r.code, 4, "{r:#?}");
    let result = r.result();
    assert_eq!(result["subtype"], "error_max_turns");
    let sub = r
        .events_of("tool.finished")
        .into_iter()
        .find(|e| e["call_id"] == "sub1")
        .unwrap();
    assert!(
        sub["output"]
            .as_str()
            .unwrap()
            .contains("limit reached: max_turns"),
        "{sub}"
    );
}
