//! Appending to session.jsonl: one redacted line per item, written with one `write` call.
//!
//! The file is created once, whole (its first line written to a temporary file that is
//! then renamed into place, over a log an earlier run left in the same folder), and from
//! then on only appended to: at no
//! moment is there no session file or a file without its first line. A process killed in
//! the middle of an append leaves at most a torn last line, which the reader skips. A write
//! that fails (a full disk) is cut back and its lines go out with the next ones once there
//! is room (`append_log`): the file never holds a torn line in the middle. No
//! fsync: a killed process loses nothing the kernel has; a power cut may lose the last
//! lines (syncing per item would cost more than the agent's own work per turn).

use std::io;
use std::path::Path;

use super::item::Item;
use crate::append_log::{AppendLog, Health};
use crate::redact::Redactor;

/// The open session log of a run.
#[derive(Debug)]
pub struct SessionLog {
    log: AppendLog,
    redactor: Redactor,
}

impl SessionLog {
    /// A new log at `path` whose first lines are `first` (meta, and a snapshot on a resume of
    /// an old session file), in place of an earlier run's log there.
    pub fn create(path: &Path, first: &[Item], redactor: &Redactor) -> io::Result<SessionLog> {
        let mut text = String::new();
        for item in first {
            text.push_str(&line(item, redactor)?);
        }
        // A new run's log replaces what an earlier run left in the same folder (as its
        // events.jsonl does), in one rename: there is never a moment without a file.
        let log = AppendLog::create_with(path, text.as_bytes())?;
        Ok(SessionLog {
            log,
            redactor: redactor.clone(),
        })
    }

    /// The existing log at `path`, to continue it. A torn last line (a process killed while
    /// writing it) is cut off first, so the next line starts on a line of its own.
    pub fn append_to(path: &Path, redactor: &Redactor) -> io::Result<SessionLog> {
        Ok(SessionLog {
            log: AppendLog::continue_at(path)?,
            redactor: redactor.clone(),
        })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Append `item` as one line, in one write; false when it is not on disk (yet).
    pub fn append(&mut self, item: &Item) -> io::Result<bool> {
        self.append_all(std::slice::from_ref(item))
    }

    /// Append several items with one write; false when they are not on disk (yet).
    pub fn append_all(&mut self, items: &[Item]) -> io::Result<bool> {
        let mut text = String::new();
        for item in items {
            text.push_str(&line(item, &self.redactor)?);
        }
        Ok(self.log.append(text.as_bytes()))
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
    pub fn health(&self) -> Health {
        self.log.health()
    }
}

/// `item` as a redacted JSON line (with its newline).
fn line(item: &Item, redactor: &Redactor) -> io::Result<String> {
    let json = serde_json::to_string(item).map_err(io::Error::other)?;
    let mut out = redactor.redact(&json).into_owned();
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    fn msg(text: &str) -> Item {
        Item::Message {
            message: Message::user(text),
        }
    }

    #[test]
    fn create_replaces_an_earlier_runs_log_whole() {
        // A new run with the same --out: its log, not the earlier run's (whose events.jsonl
        // the new run truncates too), and no temporary file left beside it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, "an earlier run\n").unwrap();
        let r = Redactor::new(Vec::<&str>::new(), Vec::new(), &[]);
        drop(SessionLog::create(&path, &[msg("x")], &r).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"type\":\"message\"") && !text.contains("earlier"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn appending_after_a_torn_line_cuts_it_off_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let r = Redactor::new(["sk-live-0000"], Vec::new(), &[]);
        let mut log = SessionLog::create(&path, &[msg("a sk-live-0000")], &r).unwrap();
        log.append(&msg("b")).unwrap();
        drop(log);
        let mut text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-live"), "{text}");
        text.push_str("{\"type\":\"mess");
        std::fs::write(&path, &text).unwrap();
        let mut log = SessionLog::append_to(&path, &r).unwrap();
        log.append(&msg("c")).unwrap();
        let lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        for l in &lines {
            serde_json::from_str::<Item>(l).unwrap();
        }
    }
}
