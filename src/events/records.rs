//! Records the outputs carry as they are: a check's result, an uploaded artifact.
//!
//! Owned here so the event schema needs nothing from `checks` or `tools` (which
//! emit events); those modules re-export them.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How one check went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    pub name: String,
    pub attempt: u32,
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// The last lines of stdout and stderr.
    pub output_tail: String,
    /// Cut short (or never started) because the run was stopped (a signal): the check did
    /// not fail, it did not finish, and a resume runs it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// One uploaded file, as result.json lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactRecord {
    /// The file's path relative to the workspace (absolute if it lies outside).
    pub path: String,
    /// Where the copy is.
    pub stored: PathBuf,
    pub size: u64,
    /// Hex SHA-256 of the content.
    pub sha256: String,
    /// Its media type, from the file name.
    pub kind: String,
}
