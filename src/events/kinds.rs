//! The closed sets of words events carry where a run names one of a few things: the
//! isolation a run works in, an upload's target, where a rule came from, the kind of a
//! model error.
//!
//! Owned here so the event schema names no module above it; the modules that produce
//! these (`upload`, `rules`, `provider`, the run pipeline) use them as they are.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a run works when not in the workspace itself (`run.started`, result.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// A throwaway git worktree (removed afterwards; its changes are in diff.patch and
    /// the checkpoint refs).
    Worktree,
}

impl Isolation {
    /// The word events.jsonl carries.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Worktree => "worktree",
        }
    }
}

/// What an `upload.finished` uploaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UploadTarget {
    /// The session (on failure, on recovery and at the end).
    #[default]
    Session,
    /// The artifacts (`upload.artifacts_url`).
    Artifacts,
}

impl UploadTarget {
    /// The word events.jsonl carries.
    pub fn as_str(self) -> &'static str {
        match self {
            UploadTarget::Session => "session",
            UploadTarget::Artifacts => "artifacts",
        }
    }
}

/// Where a rule was written: inline in the job file (`inline` on the wire), a subagent's
/// instructions in the job file (`job`), or the file it came from (its path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "String", into = "String")]
#[schemars(with = "String")]
pub enum RuleOrigin {
    /// The job file's `rules:` text.
    Inline,
    /// A subagent's instructions, from the job file.
    Job,
    /// A rule file: its path as the job or the repository names it.
    File(String),
}

impl RuleOrigin {
    /// The word or path events.jsonl carries.
    pub fn as_str(&self) -> &str {
        match self {
            RuleOrigin::Inline => "inline",
            RuleOrigin::Job => "job",
            RuleOrigin::File(path) => path,
        }
    }
}

impl From<String> for RuleOrigin {
    fn from(s: String) -> Self {
        match s.as_str() {
            "inline" => RuleOrigin::Inline,
            "job" => RuleOrigin::Job,
            _ => RuleOrigin::File(s),
        }
    }
}

impl From<RuleOrigin> for String {
    fn from(o: RuleOrigin) -> Self {
        match o {
            RuleOrigin::File(path) => path,
            other => other.as_str().to_owned(),
        }
    }
}

/// The kind of a model request's failure (`model.retry`), stable for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Auth,
    RateLimited,
    Quota,
    ContextLength,
    Server,
    BadRequest,
    ContentFilter,
    Network,
    Stalled,
    Decode,
    Script,
    Config,
    Cancelled,
}

impl ErrorKind {
    /// The word events.jsonl and result.json carry.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Quota => "quota",
            ErrorKind::ContextLength => "context_length",
            ErrorKind::Server => "server",
            ErrorKind::BadRequest => "bad_request",
            ErrorKind::ContentFilter => "content_filter",
            ErrorKind::Network => "network",
            ErrorKind::Stalled => "stalled",
            ErrorKind::Decode => "decode",
            ErrorKind::Script => "script",
            ErrorKind::Config => "config",
            ErrorKind::Cancelled => "cancelled",
        }
    }
}
