use super::*;
use serde_json::json;

fn pre(code: i32, stdout: &str, stderr: &str) -> Verdict {
    interpret(HookEvent::PreToolUse, Some(code), None, stdout, stderr)
}

#[test]
fn exit_two_blocks_with_stderr_as_the_reason() {
    let v = pre(2, "ignored", "no rm here\n");
    assert_eq!(v.said, HookDecision::Block);
    assert_eq!(v.reason.as_deref(), Some("no rm here"));
    let post = interpret(HookEvent::PostToolUse, Some(2), None, "", "lint failed");
    assert_eq!(post.said, HookDecision::Block);
    let note = interpret(HookEvent::Notification, Some(2), None, "", "x");
    assert_eq!(
        note.said,
        HookDecision::Nothing,
        "exit 2 blocks nothing on Notification"
    );
}

#[test]
fn permission_decisions_and_updated_input_are_read() {
    for (word, said) in [
        ("allow", HookDecision::Allow),
        ("deny", HookDecision::Block),
        ("ask", HookDecision::Ask),
        ("defer", HookDecision::Defer),
    ] {
        let out = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": word, "permissionDecisionReason": "because",
            "updatedInput": {"command": "ls"}}});
        let v = pre(0, &out.to_string(), "");
        assert_eq!(v.said, said, "{word}");
        assert_eq!(v.reason.as_deref(), Some("because"));
        assert_eq!(v.updated_input, Some(json!({"command": "ls"})));
    }
    let legacy = pre(0, r#"{"decision": "block", "reason": "old form"}"#, "");
    assert_eq!(legacy.said, HookDecision::Block);
    assert_eq!(legacy.reason.as_deref(), Some("old form"));
}

#[test]
fn continue_false_stops_and_other_codes_are_named_errors() {
    let v = pre(0, r#"{"continue": false, "stopReason": "enough"}"#, "");
    assert_eq!(v.stop.as_deref(), Some("enough"));
    let e = pre(1, "", "oops");
    assert_eq!(
        e.said,
        HookDecision::Nothing,
        "exit 1 is a non-blocking error"
    );
    assert_eq!(e.failure, Some(Failure::Exit(1)));
}

#[test]
fn a_silent_pre_tool_hook_refuses_the_call() {
    let v = interpret(
        HookEvent::PreToolUse,
        None,
        Some(Failure::Timeout(3)),
        "",
        "",
    );
    assert_eq!(v.said, HookDecision::Block);
    assert!(v.reason.unwrap().contains("timed out after 3 s"));
    let post = interpret(HookEvent::PostToolUse, None, Some(Failure::Killed), "", "");
    assert_eq!(post.said, HookDecision::Nothing);
    assert_eq!(post.failure, Some(Failure::Killed));
}

#[test]
fn stop_block_and_prompt_context() {
    let v = interpret(
        HookEvent::Stop,
        Some(0),
        None,
        r#"{"decision": "block", "reason": "tests fail"}"#,
        "",
    );
    assert_eq!(
        (v.said, v.reason.as_deref()),
        (HookDecision::Block, Some("tests fail"))
    );
    let p = interpret(
        HookEvent::UserPromptSubmit,
        Some(0),
        None,
        "today is Monday\n",
        "",
    );
    assert_eq!(p.context.as_deref(), Some("today is Monday"));
    let j = interpret(
        HookEvent::PostToolUse,
        Some(0),
        None,
        r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted"}}"#,
        "",
    );
    assert_eq!(j.context.as_deref(), Some("formatted"));
}

#[test]
fn pre_compact_reads_instructions_from_stdout_and_blocks_with_exit_two_or_decision() {
    let go = interpret(
        HookEvent::PreCompact,
        Some(0),
        None,
        "keep the API list\n",
        "",
    );
    assert_eq!(go.said, HookDecision::Nothing);
    assert_eq!(go.context.as_deref(), Some("keep the API list"));
    let two = interpret(HookEvent::PreCompact, Some(2), None, "", "not now\n");
    assert_eq!(
        (two.said, two.reason.as_deref()),
        (HookDecision::Block, Some("not now"))
    );
    let json = r#"{"decision": "block", "reason": "mid-migration"}"#;
    let block = interpret(HookEvent::PreCompact, Some(0), None, json, "");
    assert_eq!(block.said, HookDecision::Block);
    assert_eq!(block.reason.as_deref(), Some("mid-migration"));
    let other = json!({"hookSpecificOutput": {"additionalContext": "x"}}).to_string();
    let none = interpret(HookEvent::PreCompact, Some(0), None, &other, "");
    assert_eq!(
        (none.said, none.context),
        (HookDecision::Nothing, None),
        "PreCompact has no hookSpecificOutput"
    );
    let error = interpret(HookEvent::PreCompact, Some(1), None, "x", "boom");
    assert_eq!(error.said, HookDecision::Nothing, "exit 1 does not block");
}
