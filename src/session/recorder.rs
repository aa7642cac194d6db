//! What to append to the session log as the conversation grows: the messages the history
//! gained since the last look (none twice), or a snapshot when the history was rewritten.
//!
//! The recorder keeps no copy of the history — only how much of it is logged and the last
//! logged message, to notice a rewrite (compaction, pruning). Tool results are logged as
//! each call finishes, before the history has them; they are not logged again after.

use std::collections::HashSet;
use std::path::Path;

use super::item::{Item, Progress};
use super::log::SessionLog;
use super::{SESSION_VERSION, Session};
use crate::conversation::Message;
use crate::events::now;
use crate::redact::Redactor;

/// What a log continuing `session` (read from a session.json) starts with: its snapshot,
/// its checkpoints, and that it was resumed.
fn restart_items(session: &Session) -> Vec<Item> {
    let mut items = vec![Item::Snapshot {
        history: session.history.clone(),
        in_flight: session.in_flight.clone(),
        progress: session.progress(),
    }];
    items.extend(session.checkpoints.iter().map(|value| Item::Checkpoint {
        value: value.clone(),
    }));
    items.push(Item::Resumed { at: now() });
    items
}

/// The log of a run and what of the history it holds.
#[derive(Debug)]
pub struct Recorder {
    log: SessionLog,
    /// Messages of the history (from its start) that are in the log.
    synced: usize,
    /// `history[synced - 1]` when it was logged: a different message there means the
    /// history was rewritten.
    last: Option<Message>,
    /// Tool results logged as their call finished, not yet seen in the history.
    ahead: HashSet<String>,
    /// Checkpoints logged.
    checkpoints: usize,
}

impl Recorder {
    /// The log of a new run (created at `path`) or of a resumed one (continued, or, for a
    /// session.json of an earlier version, created with a snapshot of it). `history` is
    /// the history the run starts with.
    pub fn open(
        path: &Path,
        session: &Session,
        history: &[Message],
        resumed: bool,
        redactor: &Redactor,
    ) -> std::io::Result<Recorder> {
        let continued = resumed && session.schema_version == SESSION_VERSION && path.is_file();
        let log = if continued {
            let mut log = SessionLog::append_to(path, redactor)?;
            log.append(&Item::Resumed { at: now() })?;
            log
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
        let mut recorder = Recorder {
            log,
            synced: 0,
            last: None,
            ahead: HashSet::new(),
            checkpoints: session.checkpoints.len(),
        };
        let logged = if continued {
            session.recorded
        } else if resumed {
            session.history.len()
        } else {
            0
        };
        recorder.mark_synced(history, logged.min(history.len()));
        Ok(recorder)
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    fn mark_synced(&mut self, history: &[Message], n: usize) {
        self.synced = n;
        self.last = n.checked_sub(1).and_then(|i| history.get(i)).cloned();
    }

    /// Log what the history gained since the last call (or a snapshot of it, if it was
    /// rewritten), then `after` — in one write.
    pub fn sync(&mut self, history: &[Message], progress: Progress, after: Vec<Item>) {
        let rewritten = self.synced > history.len()
            || (self.synced > 0 && self.last.as_ref() != history.get(self.synced - 1));
        let mut items = Vec::new();
        if rewritten {
            self.ahead.clear();
            items.push(Item::Snapshot {
                history: history.to_vec(),
                in_flight: Vec::new(),
                progress,
            });
        } else {
            for m in &history[self.synced..] {
                match m {
                    Message::Tool { tool_call_id, .. } if self.ahead.remove(tool_call_id) => {}
                    _ => items.push(Item::Message { message: m.clone() }),
                }
            }
        }
        items.extend(after);
        self.mark_synced(history, history.len());
        self.write(&items);
    }

    /// Log a tool result now (its call has finished; the history gets it later).
    pub fn tool_result(&mut self, result: &Message) {
        if let Message::Tool { tool_call_id, .. } = result {
            self.ahead.insert(tool_call_id.clone());
        }
        self.write(&[Item::Message {
            message: result.clone(),
        }]);
    }

    /// Log the checkpoints of `list` not logged yet.
    pub fn checkpoints(&mut self, list: &[serde_json::Value]) {
        let new: Vec<Item> = list
            .iter()
            .skip(self.checkpoints)
            .map(|value| Item::Checkpoint {
                value: value.clone(),
            })
            .collect();
        self.checkpoints = self.checkpoints.max(list.len());
        if !new.is_empty() {
            self.write(&new);
        }
    }

    /// Log one item (tools started, configuration, …).
    pub fn item(&mut self, item: &Item) {
        self.write(std::slice::from_ref(item));
    }

    fn write(&mut self, items: &[Item]) {
        if let Err(e) = self.log.append_all(items) {
            tracing::warn!(
                "cannot write the session log {}: {e}",
                self.path().display()
            );
        }
    }
}
