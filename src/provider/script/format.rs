//! The script file format: the serde types of a script and its parsing.
//!
//! Kept apart from the client so the format (what a job author writes) can be read in one
//! place. Unknown keys inside a turn are errors, so a typo such as `tool_call:` is reported
//! with its line instead of silently producing an empty turn.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::provider::ProviderError;

/// A script file: a list of turns, or a mapping with `turns` (other keys, such as the
/// benchmark's `prompt`, are ignored).
#[derive(Debug, Deserialize)]
pub(super) struct Document {
    pub(super) turns: Vec<Turn>,
}

/// One scripted response.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Turn {
    pub(super) text: Option<String>,
    pub(super) tool_calls: Vec<ScriptCall>,
    pub(super) usage: Option<ScriptUsage>,
    pub(super) delay_ms: Option<u64>,
    /// Overrides the finish reason (`stop`, `tool_calls`, `length`, `content_filter`).
    pub(super) finish: Option<String>,
    pub(super) error: Option<ScriptError>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptCall {
    /// A tool name, or `@name` to pick the offered tool that matches case-insensitively.
    pub(super) name: String,
    #[serde(default)]
    pub(super) id: Option<String>,
    /// A mapping, or a string sent verbatim (it may be malformed JSON on purpose).
    #[serde(default)]
    pub(super) arguments: Option<Value>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct ScriptUsage {
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) cache_read_tokens: u64,
    pub(super) cache_write_tokens: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptError {
    pub(super) kind: ErrorKind,
    #[serde(default)]
    pub(super) status: Option<u16>,
    #[serde(default)]
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) retry_after_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum ErrorKind {
    Server,
    RateLimited,
    Auth,
    Quota,
    ContextLength,
    BadRequest,
    /// The stream breaks after the turn's text.
    Network,
    /// The stream goes silent after the turn's text (the idle timeout ends it).
    Stalled,
}

/// Parses script text: a list of turns, or a mapping with `turns`.
pub(super) fn parse(text: &str) -> Result<Vec<Turn>, ProviderError> {
    let shape: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| bad_script(&e))?;
    let turns = if shape.is_sequence() {
        serde_yaml::from_str::<Vec<Turn>>(text).map_err(|e| bad_script(&e))?
    } else {
        serde_yaml::from_str::<Document>(text)
            .map_err(|e| bad_script(&e))?
            .turns
    };
    for (n, turn) in turns.iter().enumerate() {
        if turn
            .tool_calls
            .iter()
            .any(|c| c.name.trim_start_matches('@').is_empty())
        {
            return Err(ProviderError::Script(format!(
                "turn {}: a tool call has an empty name",
                n + 1
            )));
        }
    }
    Ok(turns)
}

fn bad_script(err: &serde_yaml::Error) -> ProviderError {
    ProviderError::Script(format!("invalid script: {err}"))
}

impl ScriptError {
    pub(super) fn to_provider_error(&self) -> ProviderError {
        let status = |default: u16| self.status.unwrap_or(default);
        let message = self
            .message
            .clone()
            .unwrap_or_else(|| "scripted failure".to_string());
        let retry_after = self.retry_after_ms.map(Duration::from_millis);
        match self.kind {
            ErrorKind::Server | ErrorKind::Network | ErrorKind::Stalled => ProviderError::Server {
                status: status(500),
                message,
                retry_after,
            },
            ErrorKind::RateLimited => ProviderError::RateLimited {
                status: status(429),
                message,
                retry_after,
            },
            ErrorKind::Auth => ProviderError::Auth {
                status: status(401),
                message,
            },
            ErrorKind::Quota => ProviderError::Quota {
                status: status(429),
                message,
            },
            ErrorKind::ContextLength => ProviderError::ContextLength(message),
            ErrorKind::BadRequest => ProviderError::BadRequest {
                status: status(400),
                message,
            },
        }
    }
}
