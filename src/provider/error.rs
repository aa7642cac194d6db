//! Provider failures, classified so the retry loop and the exit code can tell a transient
//! outage from a bad key or a full context window.

use std::time::Duration;

use crate::events::ErrorKind;

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
    /// The provider's content filter refused the prompt (Azure's 400 `content_filter`): the
    /// same request is refused again, so it ends the run as a filtered answer does.
    #[error("the provider's content filter refused the prompt (HTTP {status}): {message}")]
    ContentFilter { status: u16, message: String },
    /// The server asked for a wait longer than the run can afford: the run ends at once,
    /// saying when to try again, instead of retrying against the limit.
    #[error(
        "{error}; the server asks to wait {} before retrying, longer than this run waits \
         (at most {}): retry after {retry_at}",
        human(.wait),
        human(.limit)
    )]
    RetryLater {
        error: Box<ProviderError>,
        wait: Duration,
        limit: Duration,
        retry_at: String,
    },
    /// The server ended an answer because of its own failure (`finish_reason: "error"`,
    /// vLLM's `abort`): the request is sent again.
    #[error("the server stopped the answer (stop reason: {0})")]
    Interrupted(String),
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
                | ProviderError::Interrupted(_)
        )
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            ProviderError::RetryLater { wait, .. } => Some(*wait),
            _ => None,
        }
    }

    /// A stable machine-readable kind, used in events and result.json.
    pub fn kind(&self) -> &'static str {
        self.error_kind().as_str()
    }

    /// The kind `model.retry` carries.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            ProviderError::Auth { .. } => ErrorKind::Auth,
            ProviderError::RateLimited { .. } => ErrorKind::RateLimited,
            ProviderError::Quota { .. } => ErrorKind::Quota,
            ProviderError::ContextLength(_) => ErrorKind::ContextLength,
            ProviderError::Server { .. } | ProviderError::Interrupted(_) => ErrorKind::Server,
            ProviderError::BadRequest { .. } => ErrorKind::BadRequest,
            ProviderError::ContentFilter { .. } => ErrorKind::ContentFilter,
            ProviderError::RetryLater { error, .. } => error.error_kind(),
            ProviderError::Network(_) => ErrorKind::Network,
            ProviderError::Stalled(_) => ErrorKind::Stalled,
            ProviderError::Decode(_) => ErrorKind::Decode,
            ProviderError::Script(_) => ErrorKind::Script,
            ProviderError::Config(_) => ErrorKind::Config,
            ProviderError::Cancelled => ErrorKind::Cancelled,
        }
    }
}

/// A wait in words: "42 s", "2 min 5 s", "1 h 33 min 51 s".
fn human(wait: &Duration) -> String {
    let total = wait.as_secs();
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    match (h, m) {
        (0, 0) => format!("{:.1} s", wait.as_secs_f64()).replace(".0 s", " s"),
        (0, _) => format!("{m} min {s} s"),
        _ => format!("{h} h {m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{ProviderError, human};

    #[test]
    fn a_wait_too_long_says_the_servers_words_the_wait_and_when_to_retry() {
        let err = ProviderError::RetryLater {
            error: Box::new(ProviderError::RateLimited {
                status: 429,
                message: "Please wait 5631 seconds before retrying.".into(),
                retry_after: Some(Duration::from_secs(5631)),
            }),
            wait: Duration::from_secs(5631),
            limit: Duration::from_secs(300),
            retry_at: "2026-05-01T13:33:51Z".into(),
        };
        assert_eq!(err.kind(), "rate_limited");
        assert!(!err.is_retryable());
        assert_eq!(
            err.to_string(),
            "rate limited (HTTP 429): Please wait 5631 seconds before retrying.; the server asks \
             to wait 1 h 33 min 51 s before retrying, longer than this run waits (at most 5 min \
             0 s): retry after 2026-05-01T13:33:51Z"
        );
        assert_eq!(human(&Duration::from_millis(1400)), "1.4 s");
        assert_eq!(human(&Duration::from_secs(42)), "42 s");
    }
}
