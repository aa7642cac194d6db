//! How a provider client reaches its endpoint — the settings the OpenAI-compatible and the
//! Anthropic client share (each config adds only what is its own) and the one thing the
//! shared endpoint code (`sse::endpoint`) is built from.

use std::time::Duration;

use crate::secret::Secret;

/// Where requests go, who they are for, and how long the client waits.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Base URL; the provider adds its path (`chat/completions`, `v1/messages`).
    pub api_base: String,
    /// The provider's key (an empty one is none; local servers often need none).
    pub api_key: Option<Secret>,
    pub model: String,
    /// Extra request headers (for example `anthropic-beta`).
    pub headers: Vec<(String, String)>,
    pub connect_timeout: Duration,
    /// A limit on the whole request, body included; `None` leaves it to the idle timeout.
    pub request_timeout: Option<Duration>,
}

impl Connection {
    /// No key, no extra headers, a 30 s connect timeout and no request timeout.
    pub fn new(api_base: impl Into<String>, model: impl Into<String>) -> Self {
        Connection {
            api_base: api_base.into(),
            api_key: None,
            model: model.into(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(30),
            request_timeout: None,
        }
    }
}
