//! The session of a run: everything needed to audit it and to continue it — the job, the
//! conversation with every tool result, which calls were in flight, usage, checkpoints.
//!
//! On disk it is `session.jsonl`, a log only ever appended to (as codex's rollout files):
//! a meta line, then one line per conversation item and per change of state ([`Item`]),
//! each redacted and written as it happens, so the cost of a turn does not grow with the
//! length of the run and a process killed at any moment leaves a readable session (at
//! worst a torn last line, which the reader skips and reports). [`Session`] is the log
//! folded back; `Session::load` also reads the single `session.json` of earlier versions.

mod catch_up;
mod error;
mod fold;
mod item;
mod log;
mod own_runs;
mod read;
mod recorder;
mod sink;
mod store;
#[cfg(test)]
mod tests;

pub use catch_up::catch_up;
pub use error::SessionError;
pub use fold::{EventFold, replay};
pub use item::{Item, Progress};
pub use log::SessionLog;
pub use recorder::Recorder;
pub use sink::SessionSink;
pub use store::{SessionSummary, find_session, list_sessions};

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::conversation::{Message, Usage};

/// Version of the session format: 2 is the log (`session.jsonl`), 1 the whole-file
/// `session.json` of earlier versions (still read).
pub const SESSION_VERSION: u32 = 2;

/// The file name of the session in a run folder.
pub const SESSION_FILE: &str = "session.jsonl";

/// The file name of the session written by versions before the log.
pub const LEGACY_SESSION_FILE: &str = "session.json";

/// How to rebuild the job of a resumed run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub name: String,
    /// The job file, when the run came from one.
    pub file: Option<String>,
    /// The job file's text when the run started (used if the file is gone or changed).
    pub text: Option<String>,
    pub params: Vec<(String, String)>,
    /// The command-line arguments that shaped the run, as sessions before `config` kept
    /// them (read for those only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Whether the run was given `--upload-url` (the URL is a secret and is not kept, so a
    /// resume must give it again; the resumed run says so when it does not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub upload_url_given: bool,
    /// The run's resolved configuration with the flags as given (`--resume` restores them;
    /// the upload URL is never in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<crate::config::ConfigView>,
}

/// Whether the run is still going (or was killed while going) or has ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    #[default]
    Running,
    Finished,
}

/// The session of one run, as read back (the shape of the old session.json, which
/// `sessions show --json` prints).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Session {
    pub schema_version: u32,
    pub session_id: String,
    pub job: JobRecord,
    pub workspace: String,
    pub created_at: String,
    pub updated_at: String,
    pub state: SessionState,
    /// Final status when finished (`success`, `limit_reached`, …).
    pub status: Option<String>,
    pub history: Vec<Message>,
    /// Calls of the last assistant message that started but had not finished when the
    /// process stopped. On resume they are answered as interrupted, never run twice.
    #[serde(default)]
    pub in_flight: Vec<String>,
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// Events written so far (a resumed run continues the numbering).
    pub last_seq: u64,
    #[serde(default)]
    pub checkpoints: Vec<serde_json::Value>,
    #[serde(default)]
    pub checklist: Option<String>,
    /// The run's resolved configuration, when the run recorded one ([`Item::Config`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
    /// What the reader had to pass over (a torn last line), for the user to be told.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// How many messages of `history` are in the log already (a resumed run appends the
    /// rest); 0 for an old session.json, which the resumed run rewrites as a snapshot.
    #[serde(skip)]
    pub recorded: usize,
}

impl Session {
    /// The session in `path`: a session.jsonl log, or an old session.json.
    pub fn load(path: &Path) -> Result<Session, SessionError> {
        let text = std::fs::read_to_string(path).map_err(|source| SessionError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if read::is_log(&text) {
            return read::fold(path, &text);
        }
        let s: Session =
            serde_json::from_str(&text).map_err(|source| SessionError::NotASession {
                path: path.to_path_buf(),
                source,
            })?;
        if s.schema_version != 1 {
            return Err(SessionError::Unsupported {
                path: path.to_path_buf(),
                version: s.schema_version,
            });
        }
        Ok(s)
    }

    /// The counters of the session.
    pub fn progress(&self) -> Progress {
        Progress {
            turns: self.turns,
            usage: self.usage,
            cost_usd: self.cost_usd,
            last_seq: self.last_seq,
        }
    }

    /// The first line of a new log for this session.
    pub fn meta(&self) -> Item {
        Item::Meta {
            schema_version: SESSION_VERSION,
            session_id: self.session_id.clone(),
            job: Box::new(self.job.clone()),
            workspace: self.workspace.clone(),
            created_at: self.created_at.clone(),
        }
    }
}
