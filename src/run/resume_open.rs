//! Opening a run to resume: its folder locked first (a run still going is not resumed
//! beside itself), the session caught up with the lines events.jsonl holds and the log
//! lost, the reader's notes said, and a run that had ended reopened — without a new
//! instruction when it stopped at a limit, on a signal, a crash or a provider outage; with
//! one (`-p`) when its agent had finished.

use std::path::{Path, PathBuf};

use super::continuation::{self, Continuation};
use super::run_lock::RunLock;
use super::start_error::RunError;
use crate::events::Envelope;
use crate::run::Resume;
use crate::session::{Session, SessionError, SessionState, find_session};

/// A run opened to resume.
pub(crate) struct Opened {
    pub path: PathBuf,
    pub session: Session,
    lock: RunLock,
    events: Vec<Envelope>,
    /// The new instruction, if one was given.
    prompt: Option<String>,
    continuation: Continuation,
}

impl Opened {
    pub(crate) fn into_resume(self) -> Resume {
        Resume {
            path: self.path,
            session: self.session,
            lock: Some(self.lock),
            events: self.events,
            prompt: self.prompt,
            continuation: self.continuation,
            approvals: std::collections::BTreeMap::default(),
        }
    }
}

/// The run `id` names (under `root`), locked, read and reopened; `prompt` is `-p`'s.
pub(crate) fn open(root: &Path, id: &str, prompt: Option<String>) -> Result<Opened, RunError> {
    let path = find_session(root, id)?;
    let dir = path
        .parent()
        .ok_or_else(|| SessionError::NoFolder { path: path.clone() })?;
    let lock = RunLock::take(dir, &format!("resume of {id}"))?;
    // Lines events.jsonl holds and the log lost (a full disk, a cut copy) come back first.
    let added = crate::session::catch_up(&path, &dir.join("events.jsonl")).unwrap_or_else(|e| {
        eprintln!(
            "warning: cannot add to {} the lines events.jsonl holds: {e}",
            path.display()
        );
        0
    });
    let mut session = Session::load(&path)?;
    if added > 0 {
        session.notes.push(format!(
            "{}: {added} lines were missing and were added from events.jsonl",
            path.display()
        ));
    }
    for note in &session.notes {
        eprintln!("warning: {note}");
    }
    let events = continuation::events_of(dir);
    let prompt = prompt.filter(|p| p != "-");
    reopen(&mut session, &events, prompt.is_some(), id)?;
    let continuation = continuation::continuation(&session, &events, prompt.is_some());
    Ok(Opened {
        path,
        session,
        lock,
        events,
        prompt,
        continuation,
    })
}

/// A run that had ended goes on: without a new instruction when it stopped short of its
/// end, with one when its agent had finished.
fn reopen(
    session: &mut Session,
    events: &[Envelope],
    instructed: bool,
    id: &str,
) -> Result<(), RunError> {
    if session.state != SessionState::Finished {
        return Ok(());
    }
    if !instructed && !continuation::continues_unasked(session, events) {
        return Err(RunError::Usage(format!(
            "run {} already finished ({}); continue it with a new instruction: --resume {id} -p PROMPT",
            session.session_id,
            session.status.as_deref().unwrap_or("unknown")
        )));
    }
    session.state = SessionState::Running;
    Ok(())
}
