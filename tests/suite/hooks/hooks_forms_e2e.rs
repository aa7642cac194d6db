//! The other documented answer forms of the non-tool events, in other languages than the
//! main hook tests use: a Stop hook's exit 2 (Python), SessionStart's JSON
//! `additionalContext` (Node), UserPromptSubmit's JSON `decision: block` and
//! `additionalContext` (sh). Each shows its effect on the run — the agent sent back, the
//! model told, the task refused — with the control that the run goes otherwise without it.

use std::path::Path;

use super::hooks_e2e::{install_hooks, python};
use crate::support::runner::{Run, cn_run, run, session_of, write_files};

fn setup(ws: &Path, prompt: &str, hooks: &str, turns: &str) {
    install_hooks(ws);
    let job = format!(
        "version: 1\nname: forms\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: {prompt}\npermissions: {{mode: auto}}\n{hooks}"
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

fn hooks(event: &str, command: &str) -> String {
    format!(
        "hooks:\n  {event}:\n    - hooks: [{{type: command, command: '{command}', timeout: 20}}]\n"
    )
}

fn history(ws: &Path) -> String {
    session_of(&ws.join("out"))["history"].to_string()
}

const STOP_TURNS: &str = "  - text: finished early\n  - tool_calls: [{name: Write, id: w1, arguments: {filepath: CHANGELOG.md, content: '- fixed'}}]\n  - text: really finished\n";

#[test]
fn a_stop_hooks_exit_2_sends_the_agent_back_with_its_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hook = format!("{} .hooks/stop_exit2.py", python());
    setup(ws, "fix it", &hooks("Stop", &hook), STOP_TURNS);
    let r = start(ws);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["result"], "really finished");
    assert!(ws.join("CHANGELOG.md").exists());
    assert!(history(ws).contains("add a CHANGELOG.md entry before you finish"));
    let ran = r.events_of("hook.ran");
    assert_eq!(
        (ran[0]["exit_code"].as_i64(), ran[0]["decision"].as_str()),
        (Some(2), Some("block"))
    );
    // Control: without the hook the agent's first answer ends the run.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, "fix it", "", STOP_TURNS);
    let r = start(ws);
    assert_eq!(r.result()["result"], "finished early");
    assert!(!ws.join("CHANGELOG.md").exists());
}

#[test]
fn session_start_json_context_reaches_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hooks = hooks("SessionStart", "node .hooks/session_context.js");
    setup(ws, "tidy up", &hooks, "  - text: done\n");
    let r = start(ws);
    assert_eq!(r.code, 0, "{r:#?}");
    let h = history(ws);
    assert!(
        h.contains("Conventions: tabs, not spaces (session startup)."),
        "{h}"
    );
    // Control: the context comes from the hook alone.
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), "tidy up", "", "  - text: done\n");
    assert_eq!(start(tmp.path()).code, 0);
    assert!(!history(tmp.path()).contains("Conventions"));
}

#[test]
fn user_prompt_submit_json_blocks_a_task_or_adds_context() {
    let hooks = hooks("UserPromptSubmit", "sh .hooks/prompt_block.sh");
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(
        ws,
        "deploy the service",
        &hooks,
        "  - tool_calls: [{name: Write, id: w1, arguments: {filepath: shipped.txt, content: x}}]\n  - text: done\n",
    );
    let r = start(ws);
    assert_eq!(r.code, 1, "{r:#?}");
    let result = r.result();
    assert_eq!(result["num_turns"], 0, "{result}");
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("deploys go through the release train"),
        "{reason}"
    );
    assert!(
        !ws.join("shipped.txt").exists(),
        "the task never reached the model"
    );
    // Another task goes through, with the hook's context.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, "rename a variable", &hooks, "  - text: done\n");
    let r = start(ws);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(history(ws).contains("Branch policy: main is protected."));
}
