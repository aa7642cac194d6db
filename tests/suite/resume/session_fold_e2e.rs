//! The session as a fold of the event stream, seen from outside: what the events say whole
//! (`message.appended`) is what session.jsonl holds — a tool result past the events' cut, the
//! messages the runner itself adds (the task, "continue" after a cut answer, check feedback,
//! a repair for a wrong output), and nothing of a subagent's own conversation. (Every run
//! of the suite is also replayed line for line: `support/outputs_replay.rs`.)

use serde_json::Value;

use crate::support::runner::{Run, cn_run, run, session_of, write_files};

/// Runs `job` (with `script` as s.yaml) in a fresh folder with `--out`.
fn run_job(job: &str, script: &str) -> (Run, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
    let out = tmp.path().join("out");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    (run(cmd, Some(&out)), tmp)
}

fn job(extra: &str) -> String {
    format!(
        "version: 1\nname: folded\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: the task\npermissions: {{mode: auto}}\n{extra}"
    )
}

/// The messages of `message.appended` events of the run itself (not of a subagent).
fn appended(r: &Run) -> Vec<Value> {
    r.events_of("message.appended")
        .into_iter()
        .filter(|e| e.get("parent_call_id").is_none())
        .map(|e| e["message"].clone())
        .collect()
}

fn history(r: &Run) -> Vec<Value> {
    session_of(r.out.as_ref().unwrap())["history"]
        .as_array()
        .unwrap()
        .clone()
}

fn user_texts(history: &[Value]) -> Vec<String> {
    history
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_tool_result_cut_in_tool_finished_is_whole_in_the_session_and_its_event() {
    // Five sizes around the events' cut (16,000 characters), one call each.
    let sizes = [15_000, 16_001, 20_000, 64_000, 200_000];
    let mut script = String::from("turns:\n");
    for n in sizes {
        script.push_str(&format!(
            "  - tool_calls: [{{name: Bash, arguments: {{command: 'head -c {n} /dev/zero | tr \"\\\\0\" a'}}}}]\n"
        ));
    }
    script.push_str("  - text: measured\n");
    let (r, _tmp) = run_job(&job("tools: {bash: {max_output_chars: 300000}}\n"), &script);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let finished = r.events_of("tool.finished");
    let history = history(&r);
    let results: Vec<&Value> = history.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), sizes.len());
    for ((n, result), event) in sizes.iter().zip(&results).zip(&finished) {
        let content = result["content"].as_str().unwrap();
        assert!(
            content.contains(&"a".repeat(*n)),
            "{n} bytes whole in the session"
        );
        let cut = event["output"].as_str().unwrap();
        assert_eq!(
            cut.contains("more bytes in the session file"),
            *n > 16_000,
            "{n}"
        );
    }
    let tools: Vec<Value> = appended(&r)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(
        tools.iter().collect::<Vec<_>>(),
        results,
        "message.appended carries the results the session holds"
    );
}

#[test]
fn the_messages_the_runner_adds_are_events_and_session_lines() {
    // A cut answer (one "continue"), then an answer whose check fails (feedback), then
    // the fix and an answer that passes.
    let script = "turns:\n  - {text: 'half an ans', finish: length}\n  - text: wer\n  - tool_calls: [{name: Write, arguments: {filepath: fixed.txt, content: ok}}]\n  - text: fixed now\n";
    let extra =
        "checks:\n  - {name: fixed exists, run: 'test -f fixed.txt'}\nretry: {max_attempts: 2}\n";
    let (r, _tmp) = run_job(&job(extra), script);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let history = history(&r);
    let users = user_texts(&history);
    assert_eq!(users.len(), 3, "{users:?}");
    assert_eq!(users[0], "the task");
    assert!(users[1].to_lowercase().contains("continue"), "{}", users[1]);
    assert!(users[2].contains("fixed exists"), "{}", users[2]);
    assert_eq!(
        appended(&r),
        history,
        "every message of the session is an event"
    );
}

#[test]
fn a_wrong_structured_answer_and_its_repair_are_in_the_session() {
    let script = "turns:\n  - text: 'not json'\n  - text: '{\"n\": 3}'\n";
    let extra = "output_schema: {type: object, required: [n], properties: {n: {type: integer}}}\n";
    let (r, _tmp) = run_job(&job(extra), script);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let history = history(&r);
    let users = user_texts(&history);
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(users[1].contains("schema"), "{}", users[1]);
    assert_eq!(appended(&r), history);
}

#[test]
fn a_subagents_conversation_is_in_the_events_but_not_in_the_session() {
    let script = "turns:\n  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: inner, prompt: 'the inner task'}}]\n  - text: inner answer\n  - text: outer answer\n";
    let subagents = "subagents:\n  - {name: worker, description: Reads., system_prompt: You read., tools: [Read]}\n";
    let (r, _tmp) = run_job(&job(subagents), script);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let nested: Vec<Value> = r
        .events_of("message.appended")
        .into_iter()
        .filter(|e| e.get("parent_call_id").is_some())
        .collect();
    assert!(
        nested
            .iter()
            .any(|e| e["message"]["content"] == "the inner task"),
        "the subagent's task is an event: {nested:?}"
    );
    let history = history(&r);
    assert!(
        history.iter().all(|m| m["content"] != "the inner task"),
        "{history:?}"
    );
    assert_eq!(appended(&r), history);
}
