//! The log written by the recorder reads back as the history it recorded.

use std::path::{Path, PathBuf};

use super::*;
use crate::conversation::ToolCall;
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

fn progress(turns: u32) -> Progress {
    Progress {
        turns,
        ..Progress::default()
    }
}

fn start(dir: &Path, history: &[Message]) -> (PathBuf, Recorder) {
    let path = dir.join(SESSION_FILE);
    let rec = Recorder::open(&path, &new_session(), history, false, &redactor()).unwrap();
    (path, rec)
}

/// One turn with two calls whose results finish out of order.
fn turn(rec: &mut Recorder, history: &mut Vec<Message>, ids: [&str; 2]) {
    history.push(Message::assistant("", vec![call(ids[0]), call(ids[1])]));
    rec.sync(history, progress(1), Vec::new());
    rec.item(&Item::ToolsStarted {
        call_ids: ids.iter().map(|s| s.to_string()).collect(),
    });
    rec.tool_result(&result(ids[1], "second"));
    rec.tool_result(&result(ids[0], "first"));
    history.push(result(ids[0], "first"));
    history.push(result(ids[1], "second"));
    rec.sync(history, progress(1), Vec::new());
}

#[test]
fn the_history_reads_back_as_recorded_each_message_once_and_masked() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("use sk-secret-123456")];
    let (path, mut rec) = start(dir.path(), &history);
    rec.sync(&history, progress(0), Vec::new());
    turn(&mut rec, &mut history, ["a", "b"]);
    turn(&mut rec, &mut history, ["c", "d"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-secret"), "{text}");
    let back = Session::load(&path).unwrap();
    history[0] = Message::user("use [REDACTED]");
    assert_eq!(back.history, history);
    assert!(back.in_flight.is_empty());
    assert_eq!(back.recorded, history.len());
    assert_eq!(back.state, SessionState::Running);
}

#[test]
fn calls_started_without_a_result_are_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    history.push(Message::assistant(
        "",
        vec![call("a"), call("b"), call("c")],
    ));
    rec.sync(&history, progress(1), Vec::new());
    rec.item(&Item::ToolsStarted {
        call_ids: vec!["a".into(), "b".into(), "c".into()],
    });
    rec.tool_result(&result("b", "done"));
    let back = Session::load(&path).unwrap();
    assert_eq!(back.in_flight, ["a", "c"]);
    assert_eq!(back.history.len(), 3);
}

#[test]
fn a_torn_last_line_is_ignored_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    turn(&mut rec, &mut history, ["a", "b"]);
    let whole = std::fs::read(&path).unwrap();
    let last_start = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    // Every cut inside the last line: the run up to the line before it is read back.
    for cut in [
        last_start + 1,
        (last_start + whole.len()) / 2,
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
fn a_bad_line_in_the_middle_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    turn(&mut rec, &mut history, ["a", "b"]);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"type\":\"message\",\"mess";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let err = Session::load(&path).unwrap_err().to_string();
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn a_rewritten_history_is_logged_as_a_snapshot_and_read_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    for ids in [["a", "b"], ["c", "d"], ["e", "f"]] {
        turn(&mut rec, &mut history, ids);
    }
    // A compaction: the task and a summary.
    history = vec![
        Message::user("go"),
        Message::assistant("summary", Vec::new()),
    ];
    rec.sync(&history, progress(3), Vec::new());
    turn(&mut rec, &mut history, ["g", "h"]);
    // Pruning from the middle, then one more message: the same length as before.
    history.remove(1);
    history.push(Message::assistant("next", Vec::new()));
    rec.sync(&history, progress(4), Vec::new());
    let back = Session::load(&path).unwrap();
    assert_eq!(back.history, history);
    assert_eq!(back.turns, 4);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"type\":\"snapshot\"").count(), 2, "{text}");
}

#[test]
fn progress_checkpoints_config_and_the_end_fold_in() {
    let dir = tempfile::tempdir().unwrap();
    let history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    rec.item(&Item::Config {
        value: serde_json::json!({"model": "m", "key": "sk-secret-123456"}),
    });
    rec.checkpoints(&[serde_json::json!({"n": 0})]);
    rec.checkpoints(&[serde_json::json!({"n": 0}), serde_json::json!({"n": 1})]);
    let finished = Item::Finished {
        at: "t9".into(),
        status: "success".into(),
        checklist: Some("- [x] done".into()),
        progress: Progress {
            turns: 7,
            last_seq: 42,
            ..Progress::default()
        },
    };
    rec.sync(&history, progress(7), vec![finished]);
    let back = Session::load(&path).unwrap();
    assert_eq!(back.checkpoints.len(), 2);
    assert_eq!(back.config.unwrap()["key"], "[REDACTED]");
    assert_eq!(back.state, SessionState::Finished);
    assert_eq!(back.status.as_deref(), Some("success"));
    assert_eq!((back.turns, back.last_seq), (7, 42));
    assert_eq!(back.updated_at, "t9");
}

#[test]
fn a_resumed_log_is_continued_and_a_new_instruction_appended() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![Message::user("go")];
    let (path, mut rec) = start(dir.path(), &history);
    turn(&mut rec, &mut history, ["a", "b"]);
    drop(rec);
    let mut s = Session::load(&path).unwrap();
    s.history.push(Message::user("and now?"));
    let mut rec = Recorder::open(&path, &s, &s.history, true, &redactor()).unwrap();
    rec.sync(&s.history, progress(1), Vec::new());
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
    let rec = Recorder::open(&path, &s, &s.history, true, &redactor()).unwrap();
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
