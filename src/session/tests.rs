//! The log written by the recorder reads back as the history it recorded.

use std::path::{Path, PathBuf};

use super::*;
use crate::conversation::{ToolCall, Usage};
use crate::events::{Emitter, Event};
use crate::redact::Redactor;

fn redactor() -> Redactor {
    Redactor::new(["sk-secret-123456"], Vec::new(), &[])
}

fn new_session() -> Session {
    Session {
        schema_version: SESSION_VERSION,
        session_id: "r1".into(),
        created_at: "t0".into(),
        ..Session::default()
    }
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "Bash".into(),
        arguments: "{}".into(),
    }
}

fn result(id: &str, text: &str) -> Message {
    Message::Tool {
        tool_call_id: id.into(),
        name: "Bash".into(),
        content: text.into(),
        images: Vec::new(),
        is_error: false,
    }
}

/// A run whose events go to a session sink, as a run's do.
struct Run {
    emitter: Emitter,
    path: PathBuf,
}

impl Run {
    fn say(&self, message: Message) {
        self.emitter.emit(Event::MessageAppended { message });
    }

    fn started(&self, id: &str) {
        self.emitter.emit(Event::ToolStarted {
            turn: 1,
            call_id: id.into(),
            tool: "Bash".into(),
            arguments: serde_json::json!({}),
            decision: None,
        });
    }

    fn turn_completed(&self, turns: u32) {
        self.emitter.emit(Event::TurnCompleted {
            turn: turns,
            num_turns: turns,
            usage: Usage::default(),
            total_cost_usd: Some(0.0),
        });
    }
}

fn open(path: &Path, session: &Session, resumed: bool) -> Run {
    let emitter = Emitter::new("r1");
    let sink = SessionSink::new();
    emitter.add_sink(Box::new(sink.clone()));
    let rec = Recorder::open(path, session, resumed, &redactor()).unwrap();
    sink.open(Some(rec), session.progress());
    Run {
        emitter,
        path: path.to_path_buf(),
    }
}

fn start(dir: &Path, history: &[Message]) -> Run {
    let run = open(&dir.join(SESSION_FILE), &new_session(), false);
    for m in history {
        run.say(m.clone());
    }
    run
}

/// One turn with two calls whose results finish out of order.
fn turn(run: &Run, history: &mut Vec<Message>, ids: [&str; 2]) {
    history.push(Message::assistant("", vec![call(ids[0]), call(ids[1])]));
    run.say(history.last().unwrap().clone());
    run.started(ids[0]);
    run.started(ids[1]);
    run.say(result(ids[1], "second"));
    run.say(result(ids[0], "first"));
    history.push(result(ids[0], "first"));
    history.push(result(ids[1], "second"));
    run.turn_completed(1);
}

#[test]
fn the_history_reads_back_as_recorded_each_message_once_and_masked() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("use sk-secret-123456")];
    let run = start(dir.path(), &history);
    turn(&run, &mut history, ["a", "b"]);
    turn(&run, &mut history, ["c", "d"]);
    let text = std::fs::read_to_string(&run.path).unwrap();
    assert!(!text.contains("sk-secret"), "{text}");
    let back = Session::load(&run.path).unwrap();
    history[0] = Message::user("use [REDACTED]");
    assert_eq!(back.history, history);
    assert!(back.in_flight.is_empty());
    assert_eq!(back.recorded, history.len());
    assert_eq!(back.state, SessionState::Running);
}

#[test]
fn calls_started_without_a_result_are_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(dir.path(), &[Message::user("go")]);
    run.say(Message::assistant(
        "",
        vec![call("a"), call("b"), call("c")],
    ));
    run.started("a");
    run.started("b");
    run.started("c");
    run.say(result("b", "done"));
    let back = Session::load(&run.path).unwrap();
    assert_eq!(back.in_flight, ["a", "c"]);
    assert_eq!(back.history.len(), 3);
}

#[test]
fn a_nested_agents_messages_stay_out_of_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(dir.path(), &[Message::user("go")]);
    let parent = std::sync::Arc::new(run.emitter);
    let nested = parent.scoped("call_9");
    nested.emit(Event::MessageAppended {
        message: Message::user("the subagent's task"),
    });
    nested.emit(Event::ToolStarted {
        turn: 1,
        call_id: "n1".into(),
        tool: "Bash".into(),
        arguments: serde_json::json!({}),
        decision: None,
    });
    let back = Session::load(&run.path).unwrap();
    assert_eq!(back.history, [Message::user("go")]);
    assert!(back.in_flight.is_empty());
}

#[test]
fn a_torn_last_line_is_ignored_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let run = start(dir.path(), &history);
    let path = run.path.clone();
    turn(&run, &mut history, ["a", "b"]);
    history.push(Message::user("the last line"));
    run.say(history.last().unwrap().clone());
    let whole = std::fs::read(&path).unwrap();
    let last_start = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    // Every cut inside the last line: the run up to the line before it is read back.
    for cut in [
        last_start + 1,
        usize::midpoint(last_start, whole.len()),
        whole.len() - 2,
    ] {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let back = Session::load(&path).unwrap();
        assert_eq!(back.history.len(), history.len() - 1, "cut at {cut}");
        assert_eq!(back.notes.len(), 1, "cut at {cut}");
        assert!(back.notes[0].contains("incomplete"), "{:?}", back.notes);
    }
}

#[test]
fn a_bad_line_in_the_middle_is_skipped_and_named_and_its_calls_results_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let run = start(dir.path(), &history);
    let path = run.path.clone();
    turn(&run, &mut history, ["a", "b"]);
    turn(&run, &mut history, ["c", "d"]);
    let text = std::fs::read_to_string(&path).unwrap();
    let whole = Session::load(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    // The second turn's response (with calls c and d), torn in the middle of the file.
    let at = lines
        .iter()
        .position(|l| l.contains("\"role\":\"assistant\"") && l.contains("\"c\""))
        .unwrap();
    lines[at] = "{\"type\":\"message\",\"mess";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let back = Session::load(&path).unwrap();
    assert!(
        back.notes[0].contains(&format!("line {}", at + 1)) && back.notes[0].contains("skipped"),
        "{:?}",
        back.notes
    );
    // The results of c and d have no call before them now: left out, and said.
    assert_eq!(
        back.history.len(),
        whole.history.len() - 3,
        "{:?}",
        back.history
    );
    assert!(
        back.notes[1].contains("calls d, c are left out"),
        "{:?}",
        back.notes
    );
    assert!(back.history.iter().all(|m| !matches!(m, Message::Tool { tool_call_id, .. } if tool_call_id == "c" || tool_call_id == "d")));
}

#[test]
fn a_rewritten_history_is_logged_as_a_snapshot_and_read_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let run = start(dir.path(), &history);
    for ids in [["a", "b"], ["c", "d"], ["e", "f"]] {
        turn(&run, &mut history, ids);
    }
    // A compaction: the task and a summary.
    history = vec![
        Message::user("go"),
        Message::assistant("summary", Vec::new()),
    ];
    run.emitter.emit(Event::HistoryReplaced {
        history: history.clone(),
    });
    turn(&run, &mut history, ["g", "h"]);
    run.turn_completed(4);
    let back = Session::load(&run.path).unwrap();
    assert_eq!(back.history, history);
    assert_eq!(back.turns, 4);
    let text = std::fs::read_to_string(&run.path).unwrap();
    assert_eq!(text.matches("\"type\":\"snapshot\"").count(), 1, "{text}");
}

#[test]
fn checkpoints_config_and_the_end_fold_in() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(dir.path(), &[Message::user("go")]);
    run.emitter.emit(Event::ConfigResolved {
        config: Box::new(crate::events::config_sample(
            serde_json::json!({"api_key_env": "sk-secret-123456"}),
        )),
    });
    for index in [0, 1] {
        run.emitter.emit(Event::CheckpointCreated {
            turn: index,
            index,
            reference: format!("refs/cn-run/r1/{index}"),
            commit: "c0ffee".into(),
            call_id: None,
            label: "start".into(),
            files_changed: 2,
            skipped: Vec::new(),
        });
    }
    run.emitter.emit(Event::SessionFinished {
        status: crate::exit_code::Status::Success,
        checklist: Some("- [x] done".into()),
        num_turns: 7,
        usage: Usage::default(),
        total_cost_usd: None,
    });
    let back = Session::load(&run.path).unwrap();
    assert_eq!(back.checkpoints.len(), 2);
    assert_eq!(back.checkpoints[1]["reference"], "refs/cn-run/r1/1");
    assert_eq!(back.checkpoints[1]["files_changed"], 2);
    assert_eq!(back.config.unwrap()["flags"]["api_key_env"], "[REDACTED]");
    assert_eq!(back.state, SessionState::Finished);
    assert_eq!(back.status.as_deref(), Some("success"));
    assert_eq!(back.checklist.as_deref(), Some("- [x] done"));
    assert_eq!((back.turns, back.last_seq), (7, 5));
}

#[test]
fn a_resumed_log_is_continued_and_a_new_instruction_appended() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let run = start(dir.path(), &history);
    turn(&run, &mut history, ["a", "b"]);
    let path = run.path.clone();
    drop(run);
    let mut s = Session::load(&path).unwrap();
    let logged = s.history.len();
    s.history.push(Message::user("and now?"));
    let run = open(&path, &s, true);
    run.emitter.emit(Event::RunStarted {
        job: "j".into(),
        prompt: String::new(),
        provider: "script".into(),
        model: "m".into(),
        workspace: "/w".into(),
        tools: Vec::new(),
        mode: crate::events::Mode::Auto,
        resumed: true,
        continues: false,
        output_dir: String::new(),
        session_path: None,
        checks: Vec::new(),
        isolation: None,
        sandbox: None,
        policy: Vec::new(),
        report_path: None,
        trace_id: None,
    });
    run.say(s.history[logged].clone());
    let back = Session::load(&path).unwrap();
    assert_eq!(back.history, s.history);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"type\":\"meta\"").count(), 1);
    assert_eq!(text.matches("\"type\":\"resumed\"").count(), 1);
}

#[test]
fn an_old_session_json_is_read_and_resumed_into_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let old = serde_json::json!({
        "schema_version": 1, "session_id": "old1",
        "job": {"name": "j", "file": null, "text": null, "params": [], "args": []},
        "workspace": "/w", "created_at": "t0", "updated_at": "t1", "state": "running",
        "status": null, "turns": 1,
        "usage": {"input_tokens": 5, "output_tokens": 2}, "cost_usd": null, "last_seq": 4,
        "history": [{"role": "user", "content": "go"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "Bash", "arguments": "{}"}]}],
        "in_flight": ["a"], "checkpoints": [{"n": 0}]
    });
    let legacy = dir.path().join(LEGACY_SESSION_FILE);
    std::fs::write(&legacy, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let s = Session::load(&legacy).unwrap();
    assert_eq!(
        (s.session_id.as_str(), s.turns, s.history.len()),
        ("old1", 1, 2)
    );
    let path = dir.path().join(SESSION_FILE);
    let rec = Recorder::open(&path, &s, true, &redactor()).unwrap();
    assert_eq!(rec.logged, s.history.len());
    drop(rec);
    let back = Session::load(&path).unwrap();
    assert_eq!(back.session_id, "old1");
    assert_eq!(back.history, s.history);
    assert_eq!(back.in_flight, ["a"]);
    assert_eq!(back.checkpoints.len(), 1);
    assert_eq!(back.last_seq, 4);
    assert_eq!(
        store::find_session(dir.path(), dir.path().to_str().unwrap()).unwrap(),
        path
    );
}

#[test]
fn a_session_of_an_unknown_version_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LEGACY_SESSION_FILE);
    std::fs::write(&path, "{\"schema_version\": 7, \"session_id\": \"x\"}").unwrap();
    let err = Session::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("not a session file") || err.contains("not supported"),
        "{err}"
    );
    std::fs::write(&path, "").unwrap();
    assert!(Session::load(&path).is_err());
}
