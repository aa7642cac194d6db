//! Finding sessions: the run folders under `.cn-run/`, newest first.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{LEGACY_SESSION_FILE, SESSION_FILE, Session, SessionError};

/// The session file of a run folder: the log, else an old session.json.
fn in_folder(dir: &Path) -> Option<PathBuf> {
    [SESSION_FILE, LEGACY_SESSION_FILE]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// One line of `cn-run sessions list`.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    pub session_id: String,
    pub job: String,
    pub state: String,
    pub status: Option<String>,
    pub turns: u32,
    pub updated_at: String,
    pub path: String,
}

/// Sessions in the run folders under `root` (usually `.cn-run`), newest first.
pub fn list_sessions(root: &Path) -> Vec<(PathBuf, Session)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf, Session)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| in_folder(&e.path()))
        .filter_map(|p| {
            let mtime = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            let s = Session::load(&p).ok()?;
            Some((mtime, p, s))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p, s)| (p, s)).collect()
}

/// The session file for `id` (`latest`, a run id, a run folder or a session file path).
pub fn find_session(root: &Path, id: &str) -> Result<PathBuf, SessionError> {
    if id == "latest" {
        return list_sessions(root)
            .into_iter()
            .map(|(p, _)| p)
            .find(|p| super::own_runs::made_by_a_run(p))
            .ok_or_else(|| SessionError::NoSessions {
                root: root.to_path_buf(),
            });
    }
    let direct = Path::new(id);
    if direct.is_file() {
        return Ok(direct.to_path_buf());
    }
    if let Some(found) = in_folder(direct).or_else(|| in_folder(&root.join(id))) {
        return Ok(found);
    }
    Err(SessionError::NotFound {
        id: id.to_owned(),
        root: root.to_path_buf(),
    })
}

impl SessionSummary {
    pub fn of(path: &Path, s: &Session) -> Self {
        SessionSummary {
            session_id: s.session_id.clone(),
            job: s.job.name.clone(),
            state: format!("{:?}", s.state).to_lowercase(),
            status: s.status.clone(),
            turns: s.turns,
            updated_at: s.updated_at.clone(),
            path: path.display().to_string(),
        }
    }
}
