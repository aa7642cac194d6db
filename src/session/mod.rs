//! The session file: everything needed to audit a run and to continue it — the job, the
//! conversation with every tool result, which calls were in flight, usage, checkpoints.
//!
//! It is rewritten atomically (temp file + rename) after every model response and every
//! started and finished tool call, so a run killed with SIGKILL loses nothing that had
//! completed.

mod store;

pub use store::{SessionSummary, find_session, list_sessions};

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::conversation::{Message, Usage};
use crate::redact::Redactor;

/// Version of the session format.
pub const SESSION_VERSION: u32 = 1;

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

/// The session of one run.
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
    /// Calls of the last assistant message that started but had not finished when this
    /// file was written. On resume they are answered as interrupted, never run twice.
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
}

impl Session {
    /// Write to `path` atomically, with secret values masked.
    pub fn save(&self, path: &Path, redactor: &Redactor) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let text = redactor.redact(&text);
        // No fsync: a killed process loses nothing the kernel has, and syncing after
        // every tool call would cost more than the agent's own work per turn. (A power
        // cut may lose the last few writes.)
        crate::out_file::write_whole(path, &[text.as_bytes()])
    }

    pub fn load(path: &Path) -> Result<Session, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let s: Session = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a session file: {e}", path.display()))?;
        if s.schema_version != SESSION_VERSION {
            return Err(format!(
                "{}: session format {} is not supported",
                path.display(),
                s.schema_version
            ));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_masks_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json");
        let s = Session {
            schema_version: SESSION_VERSION,
            session_id: "r1".into(),
            history: vec![Message::user("token sk-secret-123456 here")],
            ..Session::default()
        };
        let r = Redactor::new(["sk-secret-123456"], Vec::new(), &[]);
        s.save(&path, &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-secret"));
        let back = Session::load(&path).unwrap();
        assert_eq!(back.history[0].text(), "token [REDACTED] here");
    }
}
