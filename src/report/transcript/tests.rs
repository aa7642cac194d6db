//! The transcript fold fed by hand: calls carry their verdict, result and checkpoint;
//! a nested agent's events make its own conversation, counted in the turn that called it;
//! a resumed run is one transcript.

use serde_json::json;

use super::sample::{Events, every_kind};
use super::*;
use crate::events::ToolStatus;

fn transcript(e: &Events) -> Transcript {
    Transcript::of(&e.list, &Redactor::none())
}

#[test]
fn each_call_has_its_verdict_rule_result_and_checkpoint() {
    let t = transcript(&every_kind("x"));
    let by_id = |id: &str| t.calls.iter().find(|c| c.id == id).unwrap();
    let ran = by_id("x");
    assert!(
        matches!(&ran.verdict, Verdict::Allowed(Some(d)) if d.rule.as_deref() == Some("Bash(echo *)")),
        "{:?}",
        ran.verdict
    );
    assert_eq!(ran.status, Some(ToolStatus::Ok));
    assert_eq!(ran.output.as_deref(), Some("x"));
    let mark = &t.checkpoints[ran.checkpoint.unwrap()];
    assert_eq!((mark.index, mark.call), (1, Some(0)));
    let denied = by_id("c5");
    assert!(matches!(
        &denied.verdict,
        Verdict::Decided { resolution: Resolution::Denied, decision } if decision.rule.as_deref() == Some("x")
    ));
    // A call of an unknown tool: answered, never checked.
    assert_eq!(by_id("c2").verdict, Verdict::NotRun);
    assert!(by_id("c2").is_error);
}

#[test]
fn a_nested_agent_has_its_conversation_and_counts_in_the_turn_that_called_it() {
    let t = transcript(&every_kind("x"));
    assert_eq!(t.agents.len(), 2);
    let sub = &t.agents[1];
    let call = sub.call.unwrap();
    assert_eq!(t.calls[call].id, "c4");
    assert_eq!(t.calls[call].subagent, Some(1));
    assert_eq!(sub.responses, 1);
    assert!(matches!(&sub.entries[0], Entry::User { text, .. } if text == "x"));
    // Turn 2: the main agent's response and the subagent's.
    assert_eq!(t.turns[1].responses, 2);
    assert_eq!(t.turns[1].usage.input_tokens, 20);
    assert_eq!(t.turns[1].cost.known(), Some(0.02));
    // The subagent's call is its own, not the main agent's.
    let n1 = t.calls.iter().find(|c| c.id == "n1").unwrap();
    assert_eq!((n1.agent, n1.turn_row), (1, Some(1)));
    assert!(
        !t.turns[1]
            .calls
            .contains(&t.calls.iter().position(|c| c.id == "n1").unwrap())
    );
}

#[test]
fn a_killed_and_resumed_run_is_one_transcript_with_both_starts() {
    let mut e = Events::default();
    e.started("j", "task", false)
        .user(None, "task")
        .turn(None, 1)
        .response(
            None,
            1,
            "first",
            &[("a", "Bash", "{\"command\": \"echo 1\"}")],
        )
        .push(
            None,
            json!({"type": "tool.started", "turn": 1, "call_id": "a", "tool": "Bash",
            "arguments": {"command": "echo 1"}}),
        )
        // killed here: the call has no result; then resumed.
        .started("j", "task", true)
        .result(None, "a", "Bash", "interrupted", true)
        .turn(None, 2)
        .response(None, 2, "done", &[])
        .completed("success", 0, "done");
    let t = transcript(&e);
    assert_eq!(t.runs.len(), 2);
    assert!(t.runs[1].resumed);
    assert_eq!(t.turns.len(), 2);
    let a = &t.calls[0];
    assert_eq!(
        (a.output.as_deref(), a.is_error),
        (Some("interrupted"), true)
    );
    assert!(matches!(a.verdict, Verdict::Allowed(None)));
    assert_eq!(t.result.status.as_str(), "success");
    let runs = t.agents[0]
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Run(_)))
        .count();
    assert_eq!(runs, 2);
}

#[test]
fn a_secret_the_caller_knows_is_masked_in_every_string() {
    let secret = "s3cr3t-<value>&\"quoted\"";
    let t = Transcript::of(
        &every_kind(secret).list,
        &Redactor::from_values(vec![secret.to_owned()]),
    );
    let debug = format!("{t:?}");
    let at = debug.find("s3cr3t").unwrap_or(0);
    assert!(
        !debug.contains("s3cr3t"),
        "{}",
        &debug[at.saturating_sub(300)..(at + 100).min(debug.len())]
    );
    assert!(debug.contains(crate::redact::MASK));
}
