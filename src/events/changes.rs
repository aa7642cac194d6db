//! What a run changed, as `changes.recorded` and result.json carry it: the diff's totals,
//! each file of the patch, what the snapshots left out.
//!
//! Owned here so the event schema needs nothing from `report` or `checkpoint` (both read
//! events); they re-export these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `changes.recorded` event: what result.json says about the run's changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Changes {
    pub patch_path: Option<String>,
    pub diff: Option<DiffStat>,
    pub secret_in_diff: bool,
    pub checkpoints: Vec<Checkpoint>,
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    pub git_added_bytes: Option<u64>,
    /// Each file of diff.patch with its line counts, in patch order (the step summary's
    /// list of changed files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

/// Files, insertions and deletions a run made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffStat {
    pub files: usize,
    pub insertions: usize,
    pub deletions: usize,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Added,
    Deleted,
    Modified,
}

/// One file of the patch (a row of the step summary's list, carried by
/// `changes.recorded`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    pub path: String,
    pub kind: Kind,
    /// Binary files have no line counts.
    pub binary: bool,
    pub insertions: usize,
    pub deletions: usize,
}

/// A file or folder left out of the snapshots: untracked and over the size limits, or a
/// file that cannot be read (then `reason` says why).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    /// Repo-relative path.
    pub path: String,
    /// Its size in bytes (for a folder, of the files counted before the walk stopped).
    pub bytes: u64,
    /// For a folder: how many files were counted before the walk stopped (more than the
    /// limit). Absent for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
    /// Why a file is left out when it is not its size (it cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One snapshot of the working tree, as reported in events and result.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Checkpoint {
    /// 0 for the start state, then 1, 2, … in the order they were taken.
    pub index: u32,
    /// The hidden reference holding it, `refs/cn-run/<run-id>/<index>`.
    pub reference: String,
    /// The snapshot commit's id (full hex).
    pub commit: String,
    /// What caused it, e.g. the tool call ("Edit src/main.rs").
    pub label: String,
    /// Files added, modified or deleted since the previous snapshot.
    pub files_changed: usize,
    /// Files and folders left out of this snapshot: untracked ones for their size (see
    /// `checkpoint::Limits`), and files that cannot be read (with why); rollback leaves them alone
    /// and the diff names them without content.
    pub skipped: Vec<Skipped>,
}
