use super::*;
use crate::conversation::ToolCall;

fn env(seq: u64, event: Event) -> Envelope {
    Envelope {
        schema_version: 1,
        seq,
        ts: "2026-01-01T00:00:00.000Z".to_owned(),
        run_id: "r".to_owned(),
        parent_call_id: None,
        event,
    }
}

fn check(name: &str, attempt: u32, passed: bool, interrupted: bool) -> Event {
    Event::CheckFinished(CheckResult {
        name: name.to_owned(),
        attempt,
        passed,
        exit_code: Some(i32::from(!passed)),
        duration_ms: 1,
        timed_out: false,
        output_tail: String::new(),
        interrupted,
    })
}

fn answer(text: &str) -> Message {
    Message::assistant(text, Vec::new())
}

fn completed(status: Status) -> Event {
    Event::RunCompleted {
        status,
        exit_code: status.exit_code(),
        reason: String::new(),
        limit: None,
        result: String::new(),
        num_turns: 1,
        duration_ms: 1,
        usage: crate::conversation::Usage::default(),
        total_cost_usd: None,
        cost_unknown: true,
        agent_finished: false,
        checklist: None,
    }
}

fn started(resumed: bool) -> Event {
    let line = format!(
        r#"{{"schema_version":1,"seq":1,"ts":"t","run_id":"r","type":"run.started","job":"j","prompt":"p","provider":"script","model":"m","workspace":"/w","tools":[],"mode":"auto","resumed":{resumed}}}"#
    );
    serde_json::from_str::<Envelope>(&line).unwrap().event
}

#[test]
fn only_a_run_whose_agent_finished_needs_a_new_instruction() {
    let session = Session::default();
    for (status, unasked) in [
        (Status::Success, false),
        (Status::Failed, false),
        (Status::LimitReached, true),
        (Status::Interrupted, true),
        (Status::ProviderError, true),
        (Status::InternalError, true),
        (Status::ApprovalRequired, true),
    ] {
        let events = [env(1, started(false)), env(2, completed(status))];
        assert_eq!(continues_unasked(&session, &events), unasked, "{status:?}");
    }
    // A resumed process that was killed before it said how it ended: it goes on, even
    // when the process before it had finished.
    let events = [
        env(1, started(false)),
        env(2, completed(Status::Success)),
        env(3, started(true)),
    ];
    assert!(continues_unasked(&session, &events));
}

#[test]
fn checks_that_ran_to_their_end_after_the_last_answer_are_not_run_again() {
    let events = [
        env(
            1,
            Event::MessageAppended {
                message: answer("first"),
            },
        ),
        env(2, check("lint", 1, false, false)),
        env(3, check("test", 1, true, false)),
        env(4, Event::AttemptStarted { attempt: 2 }),
        env(
            5,
            Event::MessageAppended {
                message: answer("second"),
            },
        ),
        env(6, check("lint", 2, true, false)),
        env(7, check("test", 2, false, true)),
    ];
    let session = Session {
        history: vec![Message::user("do"), answer("second")],
        ..Session::default()
    };
    let c = continuation(&session, &events, false);
    assert!(c.answered);
    assert_eq!(c.attempt, 2);
    let names: Vec<&str> = c.checks_done.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["lint"], "the interrupted one runs again");
    // A new instruction: the agent works on it, attempts start again.
    let c = continuation(&session, &events, true);
    assert!(!c.answered && c.checks_done.is_empty() && c.attempt == 0);
    // Calls still open: the agent's loop goes on.
    let calls = vec![ToolCall {
        id: "c1".into(),
        name: "Bash".into(),
        arguments: "{}".into(),
    }];
    let session = Session {
        history: vec![Message::assistant("", calls)],
        ..Session::default()
    };
    assert!(!continuation(&session, &events, false).answered);
}

#[test]
fn a_background_job_id_is_read_from_its_start_message() {
    assert_eq!(
        background_id("Started background job bg-12, pid 77. It keeps running"),
        Some("bg-12".to_owned())
    );
    assert_eq!(background_id("bg-1 started"), None);
}
