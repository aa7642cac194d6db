//! The run's own files, and whether they hold what the run says: events.jsonl and
//! session.jsonl (appended as the run goes, see `append_log`), diff.patch, the collected
//! artifacts, junit.xml, report.html and result.json. Every write is checked; one that
//! fails is kept here, with the file and the reason, and makes the run an environment
//! error (exit 6) in those words — a run never reports an outcome its files do not back.
//! The folder's lock (with its space reserve) is held here until the last file is written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::run_lock::RunLock;
use crate::append_log::{AppendLog, Health};
use crate::session::SessionSink;

/// The files an earlier run left in a folder that a new run reports anew: removed when the
/// new run takes the folder, so none of them can stand for the new run's outcome.
pub(crate) const OUTCOME_FILES: [&str; 4] =
    ["result.json", "junit.xml", "diff.patch", "report.html"];

/// The run's files as they are written.
pub(crate) struct RunFiles {
    dir: PathBuf,
    events: Arc<Mutex<AppendLog>>,
    session: SessionSink,
    lock: Option<RunLock>,
    /// Files (other than the two logs) that could not be written, in words.
    failed: Mutex<Vec<String>>,
}

impl RunFiles {
    pub(crate) fn new(
        dir: &Path,
        events: Arc<Mutex<AppendLog>>,
        session: SessionSink,
        lock: Option<RunLock>,
    ) -> RunFiles {
        RunFiles {
            dir: dir.to_path_buf(),
            events,
            session,
            lock,
            failed: Mutex::new(Vec::new()),
        }
    }

    /// `path` (in the run folder) could not be written, for `why`.
    pub(crate) fn failed(&self, path: &Path, why: &dyn std::fmt::Display) {
        let name = path
            .strip_prefix(&self.dir)
            .unwrap_or(path)
            .display()
            .to_string();
        tracing::error!("cannot write {}: {why}", path.display());
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("{name}: {why}"));
    }

    /// Writes `name` in the run folder whole (see `out_file::write_whole`); a failure is
    /// kept. True when it is written.
    pub(crate) fn write_whole(&self, name: &str, parts: &[&[u8]]) -> bool {
        let path = self.dir.join(name);
        match crate::out_file::write_whole(&path, parts) {
            Ok(()) => true,
            Err(e) => {
                self.failed(&path, &e);
                false
            }
        }
    }

    /// The run is about to write its last files: the space reserve is given back and
    /// the lines the logs could not write yet are tried again.
    pub(crate) fn last_writes(&self) {
        if let Some(lock) = &self.lock {
            lock.release();
        }
        self.flush();
    }

    /// Tries again the lines the logs could not write yet.
    pub(crate) fn flush(&self) {
        self.events_log().flush();
        self.session.flush();
    }

    /// Syncs both logs to disk (the files written whole are synced as they are written).
    pub(crate) fn sync(&self) {
        self.events_log().sync();
        self.session.sync();
    }

    fn events_log(&self) -> std::sync::MutexGuard<'_, AppendLog> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn healths(&self) -> Vec<Health> {
        let events = self.events_log().health();
        std::iter::once(events)
            .chain(self.session.health())
            .collect()
    }

    /// What the files lack, in words (None when they hold everything written so far).
    pub(crate) fn problem(&self) -> Option<String> {
        let mut parts: Vec<String> = self.healths().iter().filter_map(Health::problem).collect();
        parts.extend(
            self.failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        (!parts.is_empty()).then(|| {
            format!(
                "cannot write the run's files in {}: {}",
                self.dir.display(),
                parts.join("; ")
            )
        })
    }

    /// Logs whose writes failed and were all made good later (worth a warning).
    pub(crate) fn recovered(&self) -> Vec<String> {
        self.healths()
            .iter()
            .filter(|h| h.recovered && !h.incomplete())
            .map(|h| {
                format!(
                    "{}: a write failed ({}) and its lines were written later; nothing was lost",
                    h.path.display(),
                    h.error.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    /// Whether events.jsonl holds every event so far (the run's outcome included).
    pub(crate) fn events_whole(&self) -> bool {
        !self.events_log().health().incomplete()
    }
}

/// Removes what an earlier run left in `dir` that reports an outcome (a new run's own
/// files replace them, or their absence says they could not be written).
pub(crate) fn clear_outcome_files(dir: &Path) -> std::io::Result<()> {
    for name in OUTCOME_FILES {
        match std::fs::remove_file(dir.join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}
