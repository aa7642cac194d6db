//! The run's JSON-lines files (events.jsonl, session.jsonl) appended so that a failed write
//! loses nothing and tears nothing.
//!
//! A write can fail part-way (a disk that fills, a quota, a folder remounted read-only):
//! the bytes that did land are cut back off at once, so the file always ends with a whole
//! line and never holds a torn one in the middle. The lines that could not be written are
//! kept, in order, and go out ahead of the next line once there is room again (a disk that
//! fills and frees loses nothing). What is kept is bounded ([`MAX_PENDING`]); past that the
//! log stops growing, so it stays a prefix of the run, never a run with a hole in it. Its
//! [`Health`] says what did not reach the file and why, for the run's outcome to tell.
//!
//! Each line goes out with one positioned write at the file's known end (no `O_APPEND`:
//! after a partial write the end is ours to say). A new log is put in place whole
//! (`out_file::WholeFile`); lines are not synced one by one (a killed process loses nothing
//! the kernel has), the whole log is when the run writes its last files ([`AppendLog::sync`]).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

/// Bytes kept in memory while the file cannot be written; past this the log is cut.
pub(crate) const MAX_PENDING: usize = 64 << 20;

/// An open JSON-lines file of the run.
#[derive(Debug)]
pub(crate) struct AppendLog {
    path: PathBuf,
    file: File,
    /// The length of the file's whole lines: where the next line goes.
    end: u64,
    /// Lines not on disk yet, in order (a write failed).
    pending: Vec<u8>,
    pending_lines: usize,
    /// Lines given up on (more than [`MAX_PENDING`] waited): nothing is written any more.
    lost_lines: usize,
    /// The last write error, while lines wait or were lost; the first one, once recovered.
    error: Option<String>,
    /// A write failed and its lines went out later: nothing was lost.
    recovered: bool,
    /// Cutting a failed write back failed too: the next good write cuts again.
    dirty_tail: bool,
}

/// What did not reach a log file, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub path: PathBuf,
    /// Lines still waiting for room.
    pub unwritten_lines: usize,
    /// Lines given up on.
    pub lost_lines: usize,
    /// The write error, if a write failed.
    pub error: Option<String>,
    /// Every line that failed once was written later.
    pub recovered: bool,
}

impl Health {
    /// Whether lines are missing from the file.
    pub fn incomplete(&self) -> bool {
        self.unwritten_lines + self.lost_lines > 0
    }

    /// The file's trouble in words (None when every line is on disk).
    pub fn problem(&self) -> Option<String> {
        if !self.incomplete() {
            return None;
        }
        let name = file_name(&self.path);
        let why = self.error.as_deref().unwrap_or("the write failed");
        Some(format!(
            "{name}: {why} ({} lines not written)",
            self.unwritten_lines + self.lost_lines
        ))
    }
}

impl AppendLog {
    /// A new, empty log at `path` (it replaces an earlier run's file there whole).
    pub(crate) fn create(path: &Path) -> io::Result<AppendLog> {
        Self::create_with(path, b"")
    }

    /// A new log at `path` holding `first` (its first lines), put in place whole by a
    /// rename: there is no moment without the file or with only part of its first lines.
    pub(crate) fn create_with(path: &Path, first: &[u8]) -> io::Result<AppendLog> {
        let mut whole = crate::out_file::WholeFile::create(path)?;
        io::Write::write_all(whole.file_mut(), first)?;
        let file = whole.commit()?;
        Ok(Self::at(path, file, first.len() as u64))
    }

    /// Syncs what is written to disk (the run's end: its logs survive a power cut).
    pub(crate) fn sync(&mut self) {
        if let Err(e) = self.file.sync_data() {
            tracing::warn!("cannot sync {}: {e}", self.path.display());
        }
    }

    /// The log at `path` (made if missing), continued after its last whole line (a torn
    /// last line, from a process killed while writing it, is cut off first).
    pub(crate) fn continue_at(path: &Path) -> io::Result<AppendLog> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        crate::out_file::cut_torn_line(&mut file)?;
        let end = file.metadata()?.len();
        Ok(Self::at(path, file, end))
    }

    fn at(path: &Path, file: File, end: u64) -> AppendLog {
        AppendLog {
            path: path.to_path_buf(),
            file,
            end,
            pending: Vec::new(),
            pending_lines: 0,
            lost_lines: 0,
            error: None,
            recovered: false,
            dirty_tail: false,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `lines` (whole lines, each ending in a newline) after any still waiting.
    /// True when they are on disk now.
    pub(crate) fn append(&mut self, lines: &[u8]) -> bool {
        if self.lost_lines > 0 {
            self.lost_lines += count_lines(lines);
            return false;
        }
        self.pending.extend_from_slice(lines);
        self.pending_lines += count_lines(lines);
        self.flush()
    }

    /// Writes the lines still waiting, if there is room now. True when none wait.
    pub(crate) fn flush(&mut self) -> bool {
        if self.pending.is_empty() {
            return self.lost_lines == 0;
        }
        match self.file.write_all_at(&self.pending, self.end) {
            Ok(()) => {
                self.end += self.pending.len() as u64;
                if self.dirty_tail {
                    self.dirty_tail = self.file.set_len(self.end).is_err();
                }
                if self.error.is_some() && !self.recovered {
                    self.recovered = true;
                    tracing::info!(
                        "{}: the lines that could not be written are written now; nothing was lost",
                        self.path.display()
                    );
                }
                self.pending.clear();
                self.pending_lines = 0;
                true
            }
            Err(e) => {
                self.failed(&e);
                false
            }
        }
    }

    /// A write failed: what landed is cut back off; the lines wait, or are given up on.
    fn failed(&mut self, e: &io::Error) {
        self.dirty_tail = self.file.set_len(self.end).is_err();
        if self.error.is_none() || self.recovered {
            tracing::warn!(
                "cannot write {}: {e}; its lines are kept and written once there is room",
                self.path.display()
            );
        }
        self.recovered = false;
        self.error = Some(e.to_string());
        if self.pending.len() > MAX_PENDING {
            tracing::error!(
                "cannot write {}: {e}; {} lines are lost and nothing more is written to it",
                self.path.display(),
                self.pending_lines
            );
            self.lost_lines += self.pending_lines;
            self.pending = Vec::new();
            self.pending_lines = 0;
        }
    }

    /// What did not reach the file.
    pub(crate) fn health(&self) -> Health {
        Health {
            path: self.path.clone(),
            unwritten_lines: self.pending_lines,
            lost_lines: self.lost_lines,
            error: self.error.clone(),
            recovered: self.recovered,
        }
    }
}

fn count_lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count().max(1)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
#[path = "append_log_tests.rs"]
mod tests;
