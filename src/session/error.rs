//! Why a session cannot be found or read, typed: a session the command line names that is
//! not there is the user's to fix (exit 2); one that is there but cannot be read is the
//! environment's (exit 6). `app::start_error` maps each to its class.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `--resume latest` with no session under the run folders' root.
    #[error("no sessions under {}", .root.display())]
    NoSessions { root: PathBuf },
    /// `--resume ID` names no session.
    #[error("no session `{id}` (looked in {})", .root.display())]
    NotFound { id: String, root: PathBuf },
    /// The session file cannot be read.
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An old session.json that is not one.
    #[error("{}: not a session file: {source}", .path.display())]
    NotASession {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A session of a format this version does not read.
    #[error("{}: session format {version} is not supported", .path.display())]
    Unsupported { path: PathBuf, version: u32 },
    /// A line of the log (not the last) that is not a session item.
    #[error("{} line {line}: not a session item: {source}", .path.display())]
    BadItem {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    /// A session file path without a folder (the run folder is the session's).
    #[error("{}: the session file has no folder", .path.display())]
    NoFolder { path: PathBuf },
    /// A log whose first line is not its meta item.
    #[error("{}: no meta item on line 1", .path.display())]
    NoMeta { path: PathBuf },
}

impl SessionError {
    /// Whether the session asked for is simply not there (the command line is wrong).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            SessionError::NoSessions { .. } | SessionError::NotFound { .. }
        )
    }
}
