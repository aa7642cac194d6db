use super::*;
use serde_json::json;

fn pre(code: i32, stdout: &str, stderr: &str) -> Verdict {
    interpret(HookEvent::PreToolUse, Some(code), None, stdout, stderr)
}

#[test]
fn exit_two_blocks_with_stderr_as_the_reason() {
    let v = pre(2, "ignored", "no rm here\n");
    assert_eq!(v.said, Said::Block);
    assert_eq!(v.reason.as_deref(), Some("no rm here"));
    let post = interpret(HookEvent::PostToolUse, Some(2), None, "", "lint failed");
    assert_eq!(post.said, Said::Block);
    let note = interpret(HookEvent::Notification, Some(2), None, "", "x");
    assert_eq!(
        note.said,
        Said::Nothing,
        "exit 2 blocks nothing on Notification"
    );
}

#[test]
fn permission_decisions_and_updated_input_are_read() {
    for (word, said) in [
        ("allow", Said::Allow),
        ("deny", Said::Block),
        ("ask", Said::Ask),
        ("defer", Said::Defer),
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
    assert_eq!(legacy.said, Said::Block);
    assert_eq!(legacy.reason.as_deref(), Some("old form"));
}

#[test]
fn continue_false_stops_and_other_codes_are_named_errors() {
    let v = pre(0, r#"{"continue": false, "stopReason": "enough"}"#, "");
    assert_eq!(v.stop.as_deref(), Some("enough"));
    let e = pre(1, "", "oops");
    assert_eq!(e.said, Said::Nothing, "exit 1 is a non-blocking error");
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
    assert_eq!(v.said, Said::Block);
    assert!(v.reason.unwrap().contains("timed out after 3 s"));
    let post = interpret(HookEvent::PostToolUse, None, Some(Failure::Killed), "", "");
    assert_eq!(post.said, Said::Nothing);
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
        (Said::Block, Some("tests fail"))
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
