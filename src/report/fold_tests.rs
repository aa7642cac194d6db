//! The fold fed by hand: each event kind lands in its result field, and the run-boundary
//! rules (a finished run followed by a resumed one, a killed run) hold.

use serde_json::json;

use super::*;
use crate::events::Envelope;

fn env(seq: u64, ts: &str, parent: Option<&str>, event: serde_json::Value) -> Envelope {
    let mut v = json!({"schema_version": 1, "seq": seq, "ts": ts, "run_id": "r1"});
    if let Some(p) = parent {
        v["parent_call_id"] = json!(p);
    }
    let serde_json::Value::Object(fields) = event else {
        panic!("an event is an object");
    };
    for (k, val) in fields {
        v[k] = val;
    }
    serde_json::from_value(v).unwrap()
}

fn started(seq: u64, resumed: bool) -> Envelope {
    env(
        seq,
        "2026-01-01T00:00:00.000Z",
        None,
        json!({"type": "run.started", "job": "j", "prompt": "p", "provider": "script",
               "model": "m", "workspace": "/w", "tools": [], "mode": "headless",
               "resumed": resumed, "output_dir": "/o", "session_path": "/o/session.json",
               "checks": ["unit"], "isolation": null, "sandbox": null}),
    )
}

fn message(seq: u64, turn: u32, parent: Option<&str>, cost: f64) -> Envelope {
    env(
        seq,
        "2026-01-01T00:00:02.500Z",
        parent,
        json!({"type": "assistant.message", "turn": turn, "text": "t", "tool_calls": [],
               "usage": {"input_tokens": 10, "output_tokens": 1}, "cost_usd": cost,
               "stop_reason": "stop"}),
    )
}

fn completed(seq: u64, turns: u32) -> Envelope {
    env(
        seq,
        "2026-01-01T00:00:03.000Z",
        None,
        json!({"type": "run.completed", "status": "success", "exit_code": 0, "reason": "ok",
               "result": "done", "num_turns": turns, "duration_ms": 3000,
               "usage": {"input_tokens": 1, "output_tokens": 1}, "total_cost_usd": 0.5,
               "cost_unknown": false, "agent_finished": true}),
    )
}

#[test]
fn a_run_without_run_completed_says_it_did_not_finish_with_its_numbers() {
    let events = vec![
        started(1, false),
        env(
            2,
            "2026-01-01T00:00:01.000Z",
            None,
            json!({"type": "turn.started", "turn": 1}),
        ),
        message(3, 1, None, 0.25),
        env(
            4,
            "2026-01-01T00:00:02.000Z",
            Some("sub"),
            json!({"type": "turn.started", "turn": 7}),
        ),
        message(5, 7, Some("sub"), 1.0),
    ];
    let r = fold(&events);
    assert_eq!(r.status, Status::InternalError);
    assert!(r.reason.contains("did not finish"));
    assert_eq!(r.num_turns, 1, "a subagent's turns are not the run's");
    assert_eq!(r.usage.input_tokens, 10);
    assert_eq!(r.total_cost_usd, Some(0.25));
    assert_eq!(r.duration_ms, 2500);
    assert_eq!(r.attempts, 1);
    assert_eq!(
        (r.job.as_str(), r.events_path.as_str()),
        ("j", "/o/events.jsonl")
    );
    assert_eq!(r.checks_declared, vec!["unit".to_owned()]);
}

#[test]
fn a_finished_run_continued_with_a_new_instruction_is_described_by_the_new_run() {
    let warning = |seq, m: &str| {
        env(
            seq,
            "2026-01-01T00:00:04.000Z",
            None,
            json!({"type": "warning", "message": m}),
        )
    };
    let events = vec![
        started(1, false),
        warning(2, "first"),
        completed(3, 1),
        warning(4, "before the second start"),
        started(5, true),
        completed(6, 2),
    ];
    let r = fold(&events);
    assert_eq!(r.warnings, vec!["before the second start".to_owned()]);
    assert_eq!(r.num_turns, 2);
    assert_eq!(r.started_at, "2026-01-01T00:00:04.000Z");
    assert!(r.agent_finished && !r.is_error);
}

#[test]
fn a_killed_run_and_its_resumption_are_one_run() {
    let call = |seq| {
        env(
            seq,
            "2026-01-01T00:00:01.000Z",
            None,
            json!({"type": "tool.started", "turn": 1, "call_id": "c", "tool": "Bash", "arguments": {}}),
        )
    };
    let events = vec![
        started(1, false),
        call(2),
        started(3, true),
        call(4),
        completed(5, 2),
    ];
    let r = fold(&events);
    assert_eq!(r.num_tool_calls, 2);
    assert_eq!(r.started_at, "2026-01-01T00:00:00.000Z");
}

#[test]
fn uploads_go_to_their_target_and_the_latest_wins() {
    let upload = |seq, target: &str, ok: bool| {
        env(
            seq,
            "2026-01-01T00:00:01.000Z",
            None,
            json!({"type": "upload.finished", "target": target, "ok": ok, "status": 200,
                   "message": "m", "uploads": seq, "failures": 0}),
        )
    };
    let r = fold(&[
        upload(1, "session", false),
        upload(2, "artifacts", true),
        upload(3, "session", true),
    ]);
    assert_eq!(
        r.upload.as_ref().map(|u| (u.ok, u.uploads)),
        Some((true, 3))
    );
    assert_eq!(r.artifacts_upload.as_ref().map(|u| u.uploads), Some(2));
}

#[test]
fn a_cut_answer_that_fails_the_run_has_claude_s_subtype() {
    let mut events = vec![started(1, false)];
    events.push(env(2, "2026-01-01T00:00:01.000Z", None,
        json!({"type": "assistant.message", "turn": 1, "text": "t", "tool_calls": [], "stop_reason": "length"})));
    events.push(env(3, "2026-01-01T00:00:02.000Z", None,
        json!({"type": "run.completed", "status": "failed", "exit_code": 1, "reason": "cut",
               "result": "", "num_turns": 1, "duration_ms": 1, "usage": {"input_tokens": 0, "output_tokens": 0},
               "total_cost_usd": null, "cost_unknown": true})));
    assert_eq!(fold(&events).subtype, "error_max_output_tokens");
}
