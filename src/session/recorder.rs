//! Opening the session log of a run and appending its lines.
//!
//! What the lines are is decided by the event stream (`session::EventFold`, fed by the
//! session sink); the recorder only opens the log — a new one with its meta line, a
//! continued one, or a new one holding the snapshot of an older session file a run resumes
//! — and appends. It keeps no copy of the history.

use std::path::Path;

use super::item::Item;
use super::log::SessionLog;
use super::{SESSION_VERSION, Session};
use crate::redact::Redactor;

/// What a log continuing `session` (read from an older session file) starts with: its
/// snapshot and its checkpoints.
fn restart_items(session: &Session) -> Vec<Item> {
    let mut items = vec![Item::Snapshot {
        history: session.history.clone(),
        in_flight: session.in_flight.clone(),
        progress: session.progress(),
    }];
    items.extend(session.checkpoints.iter().map(|value| Item::Checkpoint {
        value: value.clone(),
    }));
    items
}

/// The open log of a run.
#[derive(Debug)]
pub struct Recorder {
    log: SessionLog,
    /// How many messages of the session's history the log held when opened (a resumed
    /// run says the rest as events).
    pub logged: usize,
}

impl Recorder {
    /// The log of a new run (created at `path`) or of a resumed one (continued, or, for a
    /// session of an earlier version, given a snapshot of it).
    pub fn open(
        path: &Path,
        session: &Session,
        resumed: bool,
        redactor: &Redactor,
    ) -> std::io::Result<Recorder> {
        let continued = resumed && session.schema_version == SESSION_VERSION && path.is_file();
        let log = if continued {
            SessionLog::append_to(path, redactor)?
        } else if resumed && path.is_file() {
            // An old session.json resumed beside a log: the log gets its snapshot.
            let mut log = SessionLog::append_to(path, redactor)?;
            log.append_all(&restart_items(session))?;
            log
        } else {
            let mut first = vec![session.meta()];
            if resumed {
                first.extend(restart_items(session));
            }
            SessionLog::create(path, &first, redactor)?
        };
        let logged = match (continued, resumed) {
            (true, _) => session.recorded,
            (false, true) => session.history.len(),
            (false, false) => 0,
        };
        Ok(Recorder { log, logged })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Appends `items` in one write; false when they are not on disk (a failed write is
    /// said once by the log, and its lines wait for room).
    pub fn write(&mut self, items: &[Item]) -> bool {
        if items.is_empty() {
            return true;
        }
        match self.log.append_all(items) {
            Ok(written) => written,
            Err(e) => {
                tracing::warn!(
                    "cannot write the session log {}: {e}",
                    self.path().display()
                );
                false
            }
        }
    }

    /// Writes the lines still waiting for room; true when none wait.
    pub fn flush(&mut self) -> bool {
        self.log.flush()
    }

    /// Syncs the log to disk.
    pub fn sync(&mut self) {
        self.log.sync();
    }

    /// What did not reach the file.
    pub fn health(&self) -> crate::append_log::Health {
        self.log.health()
    }
}
