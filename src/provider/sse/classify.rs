//! Turns a failed HTTP response, or an error object inside a stream, into a
//! [`ProviderError`] the retry loop and the exit code can act on.
//!
//! Both HTTP providers share this: OpenAI-compatible servers and Anthropic word their errors
//! differently (`error.code`, `error.type`, a bare `message`, an HTML page from a proxy), but
//! the questions are the same — is it the key, the quota, the context window, or a transient
//! outage worth retrying? Messages are cut short and scrubbed of the API key, because some
//! servers echo the key back.

use std::time::Duration;

use serde_json::Value;

use crate::provider::{ProviderError, overflow};
use crate::secret::Secret;

/// The useful parts of an error body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorInfo {
    pub(crate) message: String,
    /// `error.type` and `error.code` when they are strings, joined with a space.
    pub(crate) kind: String,
    /// A numeric `code`/`status` inside the body (some servers put the HTTP status there).
    pub(crate) status: Option<u16>,
    /// The wait the body asks for (Google's `RetryInfo`, "Please retry in 1.4s").
    pub(crate) retry_after: Option<Duration>,
}

/// The longest excerpt of an error body kept in a message.
const MAX_MESSAGE_CHARS: usize = 400;

/// Words of a quota that waiting does not refill (OpenAI's `insufficient_quota`, a credit
/// balance). A 429 in these words that names a wait (Gemini's per-minute "You exceeded your
/// current quota … Please retry in 1.4s") is a rate limit.
const QUOTA_MARKERS: &[&str] = &[
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance",
    "billing",
];

/// Words of a content filter that refused the prompt: Azure's 400 `content_filter`
/// (learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter, "prompt triggering
/// Azure OpenAI's content management policy", `innererror.code`
/// `ResponsibleAIPolicyViolation`) and OpenAI's `content_policy_violation`.
const FILTER_MARKERS: &[&str] = &[
    "content_filter",
    "content_policy_violation",
    "responsibleaipolicyviolation",
    "content management policy",
];

/// Reads an error object out of a JSON value: `{"error": {...}}`, `{"error": "text"}`,
/// `{"type": "error", "error": {...}}` (Anthropic), a bare `{"object": "error",
/// "message": ...}` (vLLM, Mistral) or `{"detail": ...}` (FastAPI servers). `None` when the
/// value is not an error.
pub(crate) fn error_in_json(value: &Value) -> Option<ErrorInfo> {
    if let Value::Array(items) = value {
        // Google's endpoints wrap the error object in a one-element list.
        return items.first().and_then(error_in_json);
    }
    let obj = value.as_object()?;
    match obj.get("error") {
        Some(Value::Object(inner)) => Some(info_from(inner)),
        Some(Value::String(message)) => Some(ErrorInfo {
            message: one_line(message),
            ..ErrorInfo::default()
        }),
        Some(Value::Null) | None => {
            let bare = obj.get("object").and_then(Value::as_str) == Some("error")
                || obj.get("type").and_then(Value::as_str) == Some("error")
                || (obj.contains_key("detail") && !obj.contains_key("choices"));
            bare.then(|| info_from(obj))
        }
        Some(other) => Some(ErrorInfo {
            message: words(other),
            ..ErrorInfo::default()
        }),
    }
}

fn info_from(obj: &serde_json::Map<String, Value>) -> ErrorInfo {
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or_default();
    let kind = [text("type"), text("code")]
        .into_iter()
        .filter(|s| !s.is_empty() && *s != "error")
        .collect::<Vec<_>>()
        .join(" ");
    let status = ["code", "status"]
        .iter()
        .filter_map(|key| obj.get(*key).and_then(Value::as_u64))
        .find_map(|n| u16::try_from(n).ok().filter(|n| (400..600).contains(n)));
    let mut parts: Vec<String> = ["message", "detail"]
        .iter()
        .filter_map(|key| obj.get(*key))
        .map(words)
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(meta) = obj.get("metadata").and_then(metadata_words) {
        parts.push(meta);
    }
    let mut message = parts.join(": ");
    let retry_after = super::wait::body_wait(obj, &message);
    if let Some(filtered) = filtered_categories(obj) {
        message.push_str(&format!(" (filtered: {filtered})"));
    }
    ErrorInfo {
        message,
        kind,
        status,
        retry_after,
    }
}

/// Azure's filter verdict (`innererror.content_filter_result`, or `inner_error.
/// content_filter_results` in newer API versions): the categories it filtered.
fn filtered_categories(obj: &serde_json::Map<String, Value>) -> Option<String> {
    let inner = obj.get("innererror").or_else(|| obj.get("inner_error"))?;
    let result = inner
        .get("content_filter_result")
        .or_else(|| inner.get("content_filter_results"))?
        .as_object()?;
    let names: Vec<&str> = result
        .iter()
        .filter(|(_, v)| v.get("filtered").and_then(Value::as_bool) == Some(true))
        .map(|(name, _)| name.as_str())
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// Any JSON error value in words: a string as it is, a validation list (`[{loc, msg,
/// type}]`, FastAPI and Mistral) as `loc: msg (type)` items, an object by its `message` or
/// `detail`, anything else as compact JSON. Always one line.
fn words(value: &Value) -> String {
    let text = match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(words).collect::<Vec<_>>().join("; "),
        Value::Object(map) if map.contains_key("msg") => {
            let loc = map.get("loc").and_then(Value::as_array).map(|l| {
                l.iter()
                    .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(".")
            });
            let msg = map.get("msg").map(words).unwrap_or_default();
            let kind = map.get("type").and_then(Value::as_str);
            let mut out = loc.map_or(msg.clone(), |l| format!("{l}: {msg}"));
            if let Some(kind) = kind {
                out.push_str(&format!(" ({kind})"));
            }
            out
        }
        Value::Object(map) => match ["message", "detail", "error"]
            .iter()
            .find_map(|k| map.get(*k).filter(|v| !v.is_null()))
        {
            Some(inner) => words(inner),
            None => value.to_string(),
        },
        other => other.to_string(),
    };
    one_line(&text)
}

/// OpenRouter's `error.metadata`: the upstream provider's name and its raw error.
fn metadata_words(meta: &Value) -> Option<String> {
    let map = meta.as_object()?;
    let provider = map.get("provider_name").and_then(Value::as_str);
    let raw = map.get("raw").map(words).filter(|r| !r.is_empty());
    let reasons = map.get("reasons").map(words).filter(|r| !r.is_empty());
    let detail = raw.or(reasons);
    match (provider, detail) {
        (Some(p), Some(d)) => Some(format!("{p}: {d}")),
        (None, Some(d)) => Some(d),
        (Some(p), None) => Some(format!("from {p}")),
        (None, None) => None,
    }
}

/// Whitespace (newlines included) collapsed to single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads the body of a failed response: a JSON error, an HTML page (tags stripped), or text.
pub(crate) fn error_in_body(body: &[u8], content_type: &str) -> ErrorInfo {
    let text = String::from_utf8_lossy(body);
    if let Ok(value) = serde_json::from_str::<Value>(&text)
        && let Some(info) = error_in_json(&value)
    {
        return info;
    }
    let trimmed = text.trim();
    let lower_start = trimmed.get(..trimmed.len().min(256)).unwrap_or("");
    let lower_start = lower_start.to_ascii_lowercase();
    let html = content_type.contains("html")
        || lower_start.starts_with("<!doctype")
        || lower_start.contains("<html");
    let message = if html {
        short(&strip_html(trimmed))
    } else {
        short(&one_line(trimmed))
    };
    ErrorInfo {
        message,
        ..ErrorInfo::default()
    }
}

/// Classifies an error. `http_status` is the response status (200 for an error that arrived
/// inside a successful stream, in which case the body's own code or kind decides).
pub(crate) fn classify(
    http_status: u16,
    info: &ErrorInfo,
    retry_after: Option<Duration>,
    secret: Option<&Secret>,
) -> ProviderError {
    let status = if (200..300).contains(&http_status) {
        info.status.unwrap_or_else(|| status_from_kind(&info.kind))
    } else {
        http_status
    };
    let message = short(&scrub(&info.message, secret));
    let message = if message.is_empty() {
        reason(status)
    } else {
        message
    };
    let haystack = format!("{} {}", info.kind, info.message).to_ascii_lowercase();
    let has = |markers: &[&str]| markers.iter().any(|m| haystack.contains(m));
    let retry_after = retry_after
        .or(info.retry_after)
        .or_else(|| super::wait::body_wait(&serde_json::Map::new(), &info.message));
    let exhausted =
        haystack.contains("insufficient_quota") || (retry_after.is_none() && has(QUOTA_MARKERS));
    match status {
        401 | 403 => ProviderError::Auth { status, message },
        402 => ProviderError::Quota { status, message },
        429 if exhausted => ProviderError::Quota { status, message },
        429 => ProviderError::RateLimited {
            status,
            message,
            retry_after,
        },
        400 | 413 | 422 if overflow::is_overflow(&haystack) => {
            ProviderError::ContextLength(message)
        }
        400 if has(FILTER_MARKERS) => ProviderError::ContentFilter { status, message },
        400 if has(QUOTA_MARKERS) => ProviderError::Quota { status, message },
        408 | 409 | 425 => ProviderError::Server {
            status,
            message,
            retry_after,
        },
        400..=499 => ProviderError::BadRequest { status, message },
        _ => ProviderError::Server {
            status,
            message,
            retry_after,
        },
    }
}

/// The status an in-stream error stands for, judged by its kind.
fn status_from_kind(kind: &str) -> u16 {
    let kind = kind.to_ascii_lowercase();
    let has = |s: &str| kind.contains(s);
    if has("insufficient_quota") || has("rate_limit") {
        429
    } else if has("context_length")
        || has("request_too_large")
        || has("exceed_context_size")
        || has("content_filter")
    {
        400
    } else if has("authentication") || has("invalid_api_key") {
        401
    } else if has("permission") {
        403
    } else if has("not_found") {
        404
    } else if has("invalid_request") {
        400
    } else if has("overloaded") {
        529
    } else {
        500
    }
}

pub(crate) use super::wait::header_wait as retry_after;
#[cfg(test)]
pub(crate) use super::wait::parse_retry_after;

/// Replaces the API key (if it appears) with `***`.
pub(crate) fn scrub(text: &str, secret: Option<&Secret>) -> String {
    match secret {
        Some(key) if !key.is_empty() && text.contains(key.expose()) => {
            text.replace(key.expose(), "***")
        }
        _ => text.to_string(),
    }
}

/// Cuts a message to [`MAX_MESSAGE_CHARS`] characters, keeping its start and its end (where
/// servers put "Please retry in 1.4s") around a `…`.
pub(crate) fn short(text: &str) -> String {
    const TAIL: usize = 100;
    let text = text.trim();
    let count = text.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_MESSAGE_CHARS - TAIL - 1).collect();
    let tail: String = text.chars().skip(count - TAIL).collect();
    format!("{}…{}", head.trim_end(), tail.trim_start())
}

fn reason(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("no error message")
        .to_string()
}

/// The visible text of an HTML page: tags, scripts and styles removed, entities for the
/// common characters decoded, whitespace collapsed.
fn strip_html(html: &str) -> String {
    let mut text = String::with_capacity(html.len().min(4096));
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push(' ');
        let tag = &rest[open..];
        let lower = tag.get(..7).unwrap_or(tag).to_ascii_lowercase();
        let skip_to = if lower.starts_with("<script") {
            find_ci(tag, "</script>")
        } else if lower.starts_with("<style") {
            find_ci(tag, "</style>")
        } else {
            None
        };
        let from = skip_to.unwrap_or(0);
        rest = match tag[from..].find('>') {
            Some(close) => &tag[from + close + 1..],
            None => "",
        };
    }
    text.push_str(rest);
    let text = text
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn find_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack.to_ascii_lowercase().find(needle)
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
