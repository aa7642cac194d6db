//! Where a run started, kept in its folder (`origin.json`) so the folder can be resumed
//! in another checkout: the commit HEAD was at and the workspace's path inside its
//! repository. Like `trusted.json`, a record the resume reads, not an output (every
//! output stays a fold of events.jsonl); commands and the file tools cannot write it.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The record's name in the run folder.
pub(crate) const ORIGIN: &str = "origin.json";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Origin {
    /// HEAD's commit when the run started.
    pub commit: String,
    /// The workspace relative to the repository's working tree root (`""` at the root).
    pub prefix: String,
}

/// Record where a new run in `workspace` starts (nothing outside a repository with a
/// commit). A record that cannot be written is a warning in words.
pub(crate) fn keep(workspace: &Path, out_dir: &Path) -> Option<String> {
    let origin = of(workspace)?;
    let text = serde_json::to_vec_pretty(&origin).ok()?;
    crate::out_file::write_whole(&out_dir.join(ORIGIN), &[&text])
        .err()
        .map(|e| format!("cannot keep where the run started ({ORIGIN}): {e}"))
}

/// The commit and prefix of `workspace`, when it is in a repository with a commit.
pub(crate) fn of(workspace: &Path) -> Option<Origin> {
    let repo = git2::Repository::discover(workspace).ok()?;
    let commit = repo.head().ok()?.peel_to_commit().ok()?.id().to_string();
    let root = repo.workdir()?.canonicalize().ok()?;
    let ws = workspace.canonicalize().ok()?;
    let prefix = ws.strip_prefix(&root).ok()?.to_string_lossy().into_owned();
    Some(Origin { commit, prefix })
}

/// The record of the run in `out_dir`, if it has one.
pub(crate) fn load(out_dir: &Path) -> Option<Origin> {
    serde_json::from_slice(&std::fs::read(out_dir.join(ORIGIN)).ok()?).ok()
}
