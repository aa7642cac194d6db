//! Reading session.jsonl back: the lines folded in order into a [`Session`].
//!
//! Only the history after the last snapshot is parsed (message lines before it are skipped
//! by their prefix), so a resume after a compaction does not replay the whole run. A torn
//! last line — a process killed while appending it — is left out and said in
//! [`Session::notes`]; so is a bad line anywhere else (a file damaged outside cn-run, or
//! torn by an older version on a full disk): it is skipped, named, and a tool result whose
//! call went with it is left out too, so the conversation stays one a model accepts. Only
//! a first line that is not the meta item is an error.

use std::path::Path;

use super::item::{Item, Progress, SNAPSHOT_PREFIX};
use super::{Session, SessionError, SessionState};
use crate::conversation::Message;

const MESSAGE_PREFIX: &str = "{\"type\":\"message\"";
const STARTED_PREFIX: &str = "{\"type\":\"tools_started\"";

/// Whether `text` is a session log (its first line a meta item) rather than an old
/// session.json.
pub(super) fn is_log(text: &str) -> bool {
    text.starts_with("{\"type\":\"meta\"")
}

/// The session folded from the log text of `path`.
pub(super) fn fold(path: &Path, text: &str) -> Result<Session, SessionError> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // After a last newline, `split` gives an empty tail: not a line.
    let torn = match lines.pop() {
        Some("") => None,
        Some(tail) => Some(tail),
        None => None,
    };
    // Nothing spent until a line says so (as a new run's budget starts).
    let mut session = Session {
        cost_usd: Some(0.0),
        ..Session::default()
    };
    let start = lines
        .iter()
        .rposition(|l| l.starts_with(SNAPSHOT_PREFIX))
        .unwrap_or(0);
    for (i, line) in lines.iter().enumerate() {
        let skipped =
            i < start && (line.starts_with(MESSAGE_PREFIX) || line.starts_with(STARTED_PREFIX));
        if skipped || line.is_empty() {
            continue;
        }
        let Some(item) = parse_line(path, line, i, &mut session.notes)? else {
            continue;
        };
        if i == 0 && !matches!(item, Item::Meta { .. }) {
            return Err(SessionError::NoMeta {
                path: path.to_path_buf(),
            });
        }
        apply(&mut session, item);
    }
    if let Some(tail) = torn {
        match serde_json::from_str::<Item>(tail) {
            Ok(item) => apply(&mut session, item),
            Err(_) => session.notes.push(format!(
                "{} line {}: the last line is incomplete ({} bytes; the run was killed while writing it) and is ignored",
                path.display(),
                lines.len() + 1,
                tail.len()
            )),
        }
    }
    crate::conversation::order_tool_results(&mut session.history);
    if !session.notes.is_empty() {
        drop_orphan_results(&mut session);
    }
    session.recorded = session.history.len();
    Ok(session)
}

/// Tool results whose call is not in the assistant message before them (it was on a line
/// that was skipped) are left out, and said.
fn drop_orphan_results(session: &mut Session) {
    let mut calls: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    session.history.retain(|m| match m {
        Message::Assistant { tool_calls, .. } => {
            calls = tool_calls.iter().map(|c| c.id.clone()).collect();
            true
        }
        Message::Tool { tool_call_id, .. } if !calls.contains(tool_call_id) => {
            dropped.push(tool_call_id.clone());
            false
        }
        _ => true,
    });
    if !dropped.is_empty() {
        session.notes.push(format!(
            "the results of calls {} are left out: the message with their calls was on a skipped line",
            dropped.join(", ")
        ));
    }
}

/// Line `i` (0-based) as an item; a bad line is skipped and noted, but the first line must
/// be one (the meta item).
fn parse_line(
    path: &Path,
    line: &str,
    i: usize,
    notes: &mut Vec<String>,
) -> Result<Option<Item>, SessionError> {
    match serde_json::from_str(line) {
        Ok(item) => Ok(Some(item)),
        Err(source) if i == 0 => Err(SessionError::BadItem {
            path: path.to_path_buf(),
            line: 1,
            source,
        }),
        Err(e) => {
            notes.push(format!(
                "{} line {}: not a session item ({e}); the line is skipped",
                path.display(),
                i + 1
            ));
            Ok(None)
        }
    }
}

fn apply(s: &mut Session, item: Item) {
    match item {
        Item::Meta {
            schema_version,
            session_id,
            job,
            workspace,
            created_at,
        } => {
            s.schema_version = schema_version;
            s.session_id = session_id;
            s.job = *job;
            s.workspace = workspace;
            s.updated_at.clone_from(&created_at);
            s.created_at = created_at;
        }
        Item::Config { value } => {
            // The configuration in force from here on (a resume's flags laid over).
            if let Ok(view) = serde_json::from_value(value.clone()) {
                s.job.config = Some(view);
            }
            s.config = Some(value);
        }
        Item::Message { message } => {
            match &message {
                Message::Assistant { .. } => s.in_flight.clear(),
                Message::Tool { tool_call_id, .. } => s.in_flight.retain(|id| id != tool_call_id),
                Message::User { .. } => {}
            }
            s.history.push(message);
        }
        Item::ToolsStarted { call_ids } => s.in_flight.extend(call_ids),
        Item::Progress { at, progress } => {
            s.updated_at = at;
            set_progress(s, progress);
        }
        Item::Checkpoint { value } => s.checkpoints.push(value),
        Item::Snapshot {
            history,
            in_flight,
            progress,
        } => {
            s.history = history;
            s.in_flight = in_flight;
            set_progress(s, progress);
        }
        Item::Resumed { at } => {
            s.updated_at = at;
            s.state = SessionState::Running;
            s.status = None;
        }
        Item::Finished {
            at,
            status,
            checklist,
            progress,
        } => {
            s.updated_at = at;
            s.state = SessionState::Finished;
            s.status = Some(status);
            s.checklist = checklist;
            s.in_flight.clear();
            set_progress(s, progress);
        }
    }
}

fn set_progress(s: &mut Session, p: Progress) {
    s.turns = p.turns;
    s.usage = p.usage;
    s.cost_usd = p.cost_usd;
    s.last_seq = p.last_seq;
}
