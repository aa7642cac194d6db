//! How long a server asks a client to wait before trying again, read wherever it says so:
//! `retry-after-ms`, `retry-after` (seconds or an HTTP date), the `*-reset` headers of the
//! exhausted rate limit, Google's `RetryInfo.retryDelay` in the error body, and the words of
//! the message ("Please retry in 1.4s", "Please wait 5631 seconds before retrying").
//!
//! The figure is the server's: the retry loop waits exactly that long, or ends the run at once
//! when it is longer than the run can afford ([`crate::provider::RetryPolicy`]).

use std::sync::LazyLock;
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

/// A `*-reset` header, the `*-remaining` header of the same limit, and where the pair is
/// documented. A reset counts when its limit is exhausted (remaining 0) or says nothing.
struct Reset {
    reset: &'static str,
    remaining: &'static str,
    #[allow(dead_code)]
    source: &'static str,
}

const RESETS: &[Reset] = &[
    Reset {
        reset: "x-ratelimit-reset-requests",
        remaining: "x-ratelimit-remaining-requests",
        source: "OpenAI, Groq, xAI: Go durations \"1s\", \"6m0s\" (platform.openai.com/docs/guides/rate-limits, console.groq.com/docs/rate-limits)",
    },
    Reset {
        reset: "x-ratelimit-reset-tokens",
        remaining: "x-ratelimit-remaining-tokens",
        source: "OpenAI, Groq, xAI (same pages)",
    },
    Reset {
        reset: "anthropic-ratelimit-requests-reset",
        remaining: "anthropic-ratelimit-requests-remaining",
        source: "Anthropic: RFC 3339 times (docs.anthropic.com/en/api/rate-limits, response headers)",
    },
    Reset {
        reset: "anthropic-ratelimit-tokens-reset",
        remaining: "anthropic-ratelimit-tokens-remaining",
        source: "Anthropic (same page)",
    },
    Reset {
        reset: "anthropic-ratelimit-input-tokens-reset",
        remaining: "anthropic-ratelimit-input-tokens-remaining",
        source: "Anthropic (same page)",
    },
    Reset {
        reset: "anthropic-ratelimit-output-tokens-reset",
        remaining: "anthropic-ratelimit-output-tokens-remaining",
        source: "Anthropic (same page)",
    },
    Reset {
        reset: "x-ratelimit-reset",
        remaining: "x-ratelimit-remaining",
        source: "OpenRouter: epoch milliseconds (openrouter.ai/docs/api-reference/limits); GitHub: epoch seconds",
    },
    Reset {
        reset: "x-ratelimit-reset-requests-day",
        remaining: "x-ratelimit-remaining-requests-day",
        source: "Cerebras: seconds (inference-docs.cerebras.ai/support/rate-limits)",
    },
    Reset {
        reset: "x-ratelimit-reset-tokens-minute",
        remaining: "x-ratelimit-remaining-tokens-minute",
        source: "Cerebras (same page)",
    },
];

/// The wait a response's headers ask for: `retry-after-ms`, else `retry-after`, else the
/// longest reset of an exhausted limit.
pub(crate) fn header_wait(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    if let Some(wait) = header("retry-after").and_then(parse_retry_after) {
        return Some(wait);
    }
    RESETS
        .iter()
        .filter(|r| header(r.remaining).is_none_or(|v| v.trim().parse::<f64>() == Ok(0.0)))
        .filter_map(|r| header(r.reset).and_then(parse_reset))
        .max()
}

/// Parses a `Retry-After` value: seconds (integer or decimal) or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .ok()?;
    Some(until(when))
}

/// A reset header's value: a number (seconds, or an epoch in seconds or milliseconds), a Go
/// duration (`6m0s`, `250ms`) or an RFC 3339 time.
fn parse_reset(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(n) = value.parse::<f64>() {
        if !n.is_finite() || n < 0.0 {
            return None;
        }
        return Some(if n > 1e12 {
            until(jiff::Timestamp::from_millisecond(n as i64).ok()?)
        } else if n > 1e9 {
            until(jiff::Timestamp::from_second(n as i64).ok()?)
        } else {
            Duration::from_secs_f64(n)
        });
    }
    if let Ok(when) = value.parse::<jiff::Timestamp>() {
        return Some(until(when));
    }
    go_duration(value)
}

/// The time from now until `when` (zero when it has passed).
fn until(when: jiff::Timestamp) -> Duration {
    Duration::try_from(when.duration_since(jiff::Timestamp::now())).unwrap_or(Duration::ZERO)
}

/// A Go/protobuf duration: `1.4s`, `250ms`, `1m30.5s`, `2h`, `1h2m3s`.
pub(crate) fn go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (scale, len) = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9)]
            .iter()
            .find(|(unit, _)| rest.starts_with(unit))
            .map(|(unit, scale)| (*scale, unit.len()))
            .or_else(|| match rest.chars().next()? {
                'h' => Some((3600.0, 1)),
                'm' => Some((60.0, 1)),
                's' => Some((1.0, 1)),
                _ => None,
            })?;
        total += n * scale;
        rest = &rest[len..];
    }
    (total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total))
}

/// The wait an error body asks for: Google's `RetryInfo.retryDelay` among the `details`
/// (ai.google.dev/gemini-api/docs/rate-limits; google.rpc.RetryInfo), else the words of the
/// message ("Please retry in 1.4s", "Please try again in 1m30s", "Please wait 5631 seconds
/// before retrying").
pub(crate) fn body_wait(error: &serde_json::Map<String, Value>, message: &str) -> Option<Duration> {
    let retry_info = error
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(go_duration);
    retry_info.or_else(|| words_wait(message))
}

/// "retry in 1.4s", "try again in 2m59.5s", "wait 5631 seconds", "retry after 20 seconds".
fn words_wait(message: &str) -> Option<Duration> {
    static WORDS: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(?:retry in|try again in|retry after|wait)\s+([0-9][0-9a-zµ.]*?)\.?(?:\s+(seconds?|secs?|minutes?|mins?|hours?)\b|[\s,;)]|$)",
        )
        .ok()
    });
    let found = WORDS.as_ref()?.captures(message)?;
    let figure = found.get(1)?.as_str();
    match found.get(2).map(|u| u.as_str().to_ascii_lowercase()) {
        Some(unit) => {
            let n: f64 = figure.parse().ok()?;
            let scale = match unit.chars().next() {
                Some('h') => 3600.0,
                Some('m') => 60.0,
                _ => 1.0,
            };
            (n.is_finite() && n >= 0.0).then(|| Duration::from_secs_f64(n * scale))
        }
        None => go_duration(figure),
    }
}

#[cfg(test)]
#[path = "wait_tests.rs"]
mod tests;
