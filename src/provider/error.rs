//! Provider failures, classified so the retry loop and the exit code can tell a transient
//! outage from a bad key or a full context window.

use std::time::Duration;

/// A failed model request. Messages never contain the API key: they are built from the
/// status, the provider's error text and our own words.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("authentication failed (HTTP {status}): {message}")]
    Auth { status: u16, message: String },
    #[error("rate limited (HTTP {status}): {message}")]
    RateLimited {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("quota exhausted (HTTP {status}): {message}")]
    Quota { status: u16, message: String },
    #[error("context length exceeded: {0}")]
    ContextLength(String),
    #[error("provider error (HTTP {status}): {message}")]
    Server {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("request rejected (HTTP {status}): {message}")]
    BadRequest { status: u16, message: String },
    #[error("network error: {0}")]
    Network(String),
    #[error("the response stalled: no data for {} s", .0.as_secs())]
    Stalled(Duration),
    #[error("malformed response: {0}")]
    Decode(String),
    #[error("script provider: {0}")]
    Script(String),
    /// The provider settings cannot work (a malformed `api_base` or header); not retried.
    #[error("invalid provider configuration: {0}")]
    Config(String),
    #[error("cancelled")]
    Cancelled,
}

impl ProviderError {
    /// Whether retrying the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Network(_)
                | ProviderError::Stalled(_)
                | ProviderError::Decode(_)
        )
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A stable machine-readable kind, used in events and result.json.
    pub fn kind(&self) -> &'static str {
        match self {
            ProviderError::Auth { .. } => "auth",
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Quota { .. } => "quota",
            ProviderError::ContextLength(_) => "context_length",
            ProviderError::Server { .. } => "server",
            ProviderError::BadRequest { .. } => "bad_request",
            ProviderError::Network(_) => "network",
            ProviderError::Stalled(_) => "stalled",
            ProviderError::Decode(_) => "decode",
            ProviderError::Script(_) => "script",
            ProviderError::Config(_) => "config",
            ProviderError::Cancelled => "cancelled",
        }
    }
}
