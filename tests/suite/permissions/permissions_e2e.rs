//! Headless permissions end to end: a denied call is explained to the model and the run
//! goes on; `on_ask: fail` stops with exit 3; every denial is in result.json and events.

use std::path::Path;

use crate::support::runner::{cn_run, run, write_files};

fn job(dir: &Path, on_ask: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: fetch it\npermissions: {{on_ask: {on_ask}}}\n"
    );
    let script = "turns:\n  - tool_calls: [{name: Bash, id: c1, arguments: {command: 'curl -s https://example.invalid/install.sh'}}]\n  - text: I could not download it; the policy denied curl.\n";
    write_files(dir, &[("job.yaml", &job), ("s.yaml", script)]);
    dir.join("job.yaml")
}

#[test]
fn a_denied_command_is_explained_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.arg(job(tmp.path(), "deny"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result}");
    let d = &denials[0];
    assert_eq!(d["tool_name"], "Bash");
    assert_eq!(d["tool_use_id"], "c1");
    assert_eq!(d["permission"], "ask");
    assert_eq!(d["resolution"], "denied");
    assert_eq!(
        d["tool_input"]["command"],
        "curl -s https://example.invalid/install.sh"
    );
    assert!(!d["reason"].as_str().unwrap().is_empty());
    assert!(
        d["allow_hint"].as_str().unwrap().starts_with("Bash("),
        "{d}"
    );
    // The model was told which rule denied it and how to allow it.
    let finished = r.events_of("tool.finished");
    let text = finished[0]["output"].as_str().unwrap();
    assert!(text.contains("Permission denied"), "{text}");
    assert!(text.contains("permissions: {allow:"), "{text}");
    assert_eq!(r.events_of("permission.decision").len(), 1);
    assert_eq!(
        r.events_of("tool.started").len(),
        0,
        "the command never ran"
    );
}

#[test]
fn on_ask_fail_stops_with_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.arg(job(tmp.path(), "fail"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 3, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "approval_required");
    assert_eq!(result["permission_denials"][0]["resolution"], "failed");
    assert_eq!(
        result["num_turns"], 1,
        "no further model request after the stop"
    );
}

#[test]
fn an_explicit_rule_allows_a_needs_permission_command_but_never_a_disabled_one() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\npermissions: {allow: ['Bash(echo *)', 'Bash(rm *)'], on_ask: fail}\n";
    let script = "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo hi > out.txt'}}]\n  - tool_calls: [{name: Bash, arguments: {command: 'rm -rf /'}}]\n  - text: done\n";
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg(tmp.path().join("job.yaml"))
        .arg("-C")
        .arg(tmp.path());
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("out.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(
        r.code, 0,
        "exclude is not ask: on_ask does not apply. {r:#?}"
    );
    let d = &r.result()["permission_denials"][0];
    assert_eq!(d["permission"], "exclude");
    assert_eq!(d["source"], "evaluator");
}

#[test]
fn excluded_tools_are_not_offered() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\npermissions: {exclude: [Bash, Write]}\n";
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", "- text: ok\n")]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg(tmp.path().join("job.yaml"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    let tools: Vec<String> = r.events()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"Read".to_owned()), "{tools:?}");
    assert!(
        !tools.contains(&"Bash".to_owned()) && !tools.contains(&"Write".to_owned()),
        "{tools:?}"
    );
}

#[test]
fn an_edit_rule_covers_multi_edit_and_a_call_of_the_other_edit_tool_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    // `gpt-4.1` gets MultiEdit (Continue's rule); the job's rule names Edit.
    let job = "version: 1\nmodel: {provider: script, name: gpt-4.1, script: s.yaml}\nprompt: fix it\npermissions: {allow: ['Edit(a.txt)']}\n";
    let script = "turns:
  - tool_calls: [{name: Read, id: r1, arguments: {filepath: a.txt}}]
  - tool_calls: [{name: Edit, id: e1, arguments: {file_path: a.txt, old_string: one, new_string: two}}]
  - tool_calls: [{name: MultiEdit, id: m1, arguments: {file_path: a.txt, edits: [{old_string: one, new_string: two}]}}]
  - text: done
";
    write_files(
        tmp.path(),
        &[("job.yaml", job), ("s.yaml", script), ("a.txt", "one\n")],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(tmp.path().join("job.yaml"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let finished = r.events_of("tool.finished");
    let edit = finished.iter().find(|e| e["call_id"] == "e1").unwrap();
    let text = edit["output"].as_str().unwrap();
    assert!(
        text.contains("Unknown tool `Edit`") && text.contains("call MultiEdit with `file_path`"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
        "two\n",
        "MultiEdit ran under the rule that names Edit"
    );
    assert!(
        r.result()["permission_denials"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn explain_shows_the_workspace_limits_tools_and_policy_as_the_job_file_spells_them() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "version: 1\nmodel: {provider: openai, name: gpt-4.1, api_key_env: K}\nprompt: fix it\nlimits: {max_turns: 7, timeout: 2m}\npermissions: {allow: ['Edit(src/**)', 'Bash(cargo *)'], on_ask: fail}\n";
    write_files(tmp.path(), &[("job.yaml", job)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("explain").arg("job.yaml");
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let text = &r.stdout;
    let ws = tmp.path().canonicalize().unwrap();
    assert!(
        text.contains(&format!("workspace: {}", ws.display())),
        "{text}"
    );
    assert!(text.contains("on_ask: fail"), "{text}");
    assert!(text.contains("model: openai gpt-4.1"), "{text}");
    assert!(text.contains("max_turns 7, timeout 120s"), "{text}");
    assert!(text.contains("MultiEdit, not Edit"), "{text}");
    let policy: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("policy"))
        .collect();
    assert!(policy[1].contains("Bash(cargo *)") || policy[1].contains("Edit(src/**)"));
    assert!(
        !text.contains("(no match)"),
        "the default table ends with a catch-all"
    );
}
