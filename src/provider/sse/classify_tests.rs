//! Unit tests for error classification: status tables, error bodies, Retry-After.

use std::time::Duration;

use serde_json::json;

use super::{classify, error_in_body, error_in_json, parse_retry_after, scrub, short};
use crate::secret::Secret;

fn kind_of(status: u16, body: &str) -> &'static str {
    let info = error_in_body(body.as_bytes(), "application/json");
    classify(status, &info, None, None).kind()
}

#[test]
fn statuses_map_to_kinds() {
    let plain = r#"{"error":{"message":"nope","type":"x"}}"#;
    assert_eq!(kind_of(401, plain), "auth");
    assert_eq!(kind_of(403, plain), "auth");
    assert_eq!(kind_of(429, plain), "rate_limited");
    assert_eq!(kind_of(400, plain), "bad_request");
    assert_eq!(kind_of(404, plain), "bad_request");
    assert_eq!(kind_of(408, plain), "server");
    assert_eq!(kind_of(409, plain), "server");
    assert_eq!(kind_of(500, plain), "server");
    assert_eq!(kind_of(529, plain), "server");
}

#[test]
fn quota_and_context_length_are_recognised_from_the_body() {
    let quota =
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#;
    assert_eq!(kind_of(429, quota), "quota");
    let ctx = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
    assert_eq!(kind_of(400, ctx), "context_length");
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    assert_eq!(kind_of(400, anthropic), "context_length");
    let vllm = r#"{"object":"error","message":"too many tokens in the request","type":"BadRequestError","code":400}"#;
    assert_eq!(kind_of(413, vllm), "context_length");
}

#[test]
fn in_stream_errors_are_judged_by_their_kind_or_code() {
    let overloaded =
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}});
    let err = classify(200, &error_in_json(&overloaded).unwrap(), None, None);
    assert!(err.is_retryable(), "{err}");
    let limited = json!({"error":{"type":"rate_limit_error","message":"slow down"}});
    let err = classify(200, &error_in_json(&limited).unwrap(), None, None);
    assert_eq!(err.kind(), "rate_limited");
    let coded = json!({"error":{"message":"bad key","code":401}});
    let err = classify(200, &error_in_json(&coded).unwrap(), None, None);
    assert_eq!(err.kind(), "auth");
    assert!(error_in_json(&json!({"choices": []})).is_none());
    assert!(error_in_json(&json!({"error": null, "choices": []})).is_none());
}

#[test]
fn html_pages_become_a_short_text_excerpt() {
    let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{color:red}</style>\
        <script>var x = 1 < 2;</script></head><body><h1>Bad&nbsp;Gateway</h1><p>cloud &amp; co</p></body></html>";
    let info = error_in_body(page.as_bytes(), "text/html");
    assert_eq!(info.message, "502 Bad Gateway Bad Gateway cloud & co");
    let long = format!("<html><body>{}</body></html>", "word ".repeat(500));
    let info = error_in_body(long.as_bytes(), "text/html; charset=utf-8");
    assert!(
        info.message.chars().count() <= 401,
        "{}",
        info.message.len()
    );
}

#[test]
fn an_empty_body_gets_the_status_reason() {
    let err = classify(503, &error_in_body(b"", ""), None, None);
    assert_eq!(
        err.to_string(),
        "provider error (HTTP 503): Service Unavailable"
    );
}

#[test]
fn the_key_is_scrubbed_from_messages() {
    let key = Secret::new("sk-test-1234567890");
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-test-1234567890."}}"#;
    let err = classify(401, &error_in_body(body.as_bytes(), ""), None, Some(&key));
    assert!(!err.to_string().contains("sk-test-1234567890"), "{err}");
    assert!(err.to_string().contains("***"));
    assert_eq!(scrub("plain", Some(&Secret::new(""))), "plain");
}

#[test]
fn retry_after_accepts_seconds_decimals_and_dates() {
    assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
    assert_eq!(
        parse_retry_after(" 1.5 "),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(parse_retry_after("-1"), None);
    assert_eq!(parse_retry_after("soon"), None);
    assert_eq!(
        parse_retry_after("Thu, 01 Jan 1970 00:00:01 GMT"),
        Some(Duration::ZERO)
    );
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&later)
        .unwrap();
    let wait = parse_retry_after(&date).unwrap();
    assert!(
        wait > Duration::from_secs(27) && wait <= Duration::from_secs(30),
        "{wait:?}"
    );
}

#[test]
fn short_cuts_at_a_character_boundary() {
    let text = "é".repeat(1000);
    let cut = short(&text);
    assert!(cut.contains('…'));
    assert_eq!(cut.chars().count(), 400);
    // The end of a long message stays: servers put the wait there.
    let long = format!("{} Please retry in 1.4s.", "quota ".repeat(100));
    assert!(short(&long).ends_with("Please retry in 1.4s."));
}

/// The message a body becomes, as the user reads it.
fn message_of(status: u16, body: &str) -> String {
    let info = error_in_body(body.as_bytes(), "application/json");
    classify(status, &info, None, None).to_string()
}

#[test]
fn every_error_shape_is_shown_in_the_servers_words_on_one_line() {
    let cases = [
        // Mistral: 422 with `message` as an object of pydantic details.
        (
            422,
            r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]},"type":"invalid_request_error","param":null,"code":null}"#,
            "body.stream_options: Extra inputs are not permitted (extra_forbidden)",
        ),
        // FastAPI-style servers (older vLLM, LiteLLM): a bare `detail` string.
        (404, r#"{"detail":"Not Found"}"#, "Not Found"),
        // A bare `detail` list.
        (
            422,
            r#"{"detail":[{"loc":["body","messages",1,"content"],"msg":"field required","type":"value_error.missing"}]}"#,
            "body.messages.1.content: field required (value_error.missing)",
        ),
        // OpenRouter: the upstream provider's words in error.metadata.
        (
            400,
            r#"{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"{\"error\":\"tools not supported\"}","provider_name":"Fireworks"}}}"#,
            "Provider returned error: Fireworks: {\"error\":\"tools not supported\"}",
        ),
        // A message on several lines.
        (
            400,
            r#"{"error":{"message":"bad\n\n  request\tbody","type":"invalid_request_error"}}"#,
            "bad request body",
        ),
        // `error` as an object with a nested error object.
        (
            500,
            r#"{"error":{"message":{"error":"upstream timed out"}}}"#,
            "upstream timed out",
        ),
        // Gemini's compatible endpoint wraps its errors in a one-element list.
        (
            400,
            r#"[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]"#,
            "Function call is missing a thought_signature",
        ),
    ];
    for (status, body, want) in cases {
        let got = message_of(status, body);
        assert!(got.contains(want), "{body}\n  got: {got}");
        assert!(!got.contains('\n'), "{got}");
    }
}

#[test]
fn a_key_inside_an_object_message_is_scrubbed() {
    let key = Secret::new("sk-live-0123456789abcdef".to_owned());
    let body =
        r#"{"object":"error","message":{"detail":"key sk-live-0123456789abcdef is invalid"}}"#;
    let info = error_in_body(body.as_bytes(), "application/json");
    let text = classify(401, &info, None, Some(&key)).to_string();
    assert!(!text.contains("sk-live-0123456789abcdef"), "{text}");
    assert!(text.contains("is invalid"), "{text}");
}
