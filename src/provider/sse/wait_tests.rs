use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::json;

use super::{body_wait, go_duration, header_wait};

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Within a second of `want` (dates are read against the clock).
fn about(got: Option<Duration>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("no wait, wanted {want} s"));
    assert!(
        (got.as_secs_f64() - want).abs() < 2.0,
        "got {got:?}, wanted about {want} s"
    );
}

#[test]
fn go_durations_of_every_shape() {
    for (text, want) in [
        ("1.4s", 1.4),
        ("1.444904545s", 1.444904545),
        ("250ms", 0.25),
        ("1m30.5s", 90.5),
        ("6m0s", 360.0),
        ("2h", 7200.0),
        ("1h2m3s", 3723.0),
        ("17ms", 0.017),
    ] {
        assert_eq!(go_duration(text), Some(secs(want)), "{text}");
    }
    for text in ["", "s", "1.4", "abc", "1x", "1.4s later"] {
        assert_eq!(go_duration(text), None, "{text}");
    }
}

#[test]
fn retry_after_in_seconds_milliseconds_and_dates() {
    assert_eq!(
        header_wait(&headers(&[("retry-after", "5631")])),
        Some(secs(5631.0))
    );
    assert_eq!(
        header_wait(&headers(&[
            ("retry-after-ms", "1500"),
            ("retry-after", "9")
        ])),
        Some(secs(1.5))
    );
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(90);
    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&later)
        .unwrap();
    about(header_wait(&headers(&[("retry-after", &date)])), 90.0);
}

#[test]
fn the_reset_of_the_exhausted_limit_when_there_is_no_retry_after() {
    // OpenAI/Groq: the tokens limit is exhausted, the requests limit is not.
    let openai = headers(&[
        ("x-ratelimit-remaining-requests", "499"),
        ("x-ratelimit-reset-requests", "120ms"),
        ("x-ratelimit-remaining-tokens", "0"),
        ("x-ratelimit-reset-tokens", "6m0s"),
    ]);
    assert_eq!(header_wait(&openai), Some(secs(360.0)));
    // Anthropic: RFC 3339 times.
    let at = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(42)).to_string();
    let anthropic = headers(&[
        ("anthropic-ratelimit-input-tokens-remaining", "0"),
        ("anthropic-ratelimit-input-tokens-reset", &at),
    ]);
    about(header_wait(&anthropic), 42.0);
    // OpenRouter: an epoch in milliseconds.
    let ms = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30)).as_millisecond();
    let openrouter = headers(&[
        ("x-ratelimit-remaining", "0"),
        ("x-ratelimit-reset", &ms.to_string()),
    ]);
    about(header_wait(&openrouter), 30.0);
    // Cerebras: plain seconds.
    let cerebras = headers(&[
        ("x-ratelimit-remaining-tokens-minute", "0"),
        ("x-ratelimit-reset-tokens-minute", "11.382867"),
    ]);
    assert_eq!(header_wait(&cerebras), Some(secs(11.382867)));
    // A limit with room left is not what the server waits for.
    let room = headers(&[
        ("x-ratelimit-remaining-requests", "10"),
        ("x-ratelimit-reset-requests", "1s"),
    ]);
    assert_eq!(header_wait(&room), None);
}

#[test]
fn a_body_wait_from_retry_info_or_the_words_of_the_message() {
    let gemini = json!({
        "code": 429,
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.4s"}
        ]
    });
    assert_eq!(
        body_wait(gemini.as_object().unwrap(), "Please retry in 57s."),
        Some(secs(1.4))
    );
    let empty = serde_json::Map::new();
    for (words, want) in [
        (
            "You exceeded your current quota.\nPlease retry in 1.444904545s.",
            1.444904545,
        ),
        (
            "Rate limit of 50 per 86400s exceeded for UserByModelByDay. Please wait 5631 seconds before retrying.",
            5631.0,
        ),
        (
            "Limit 30000, Used 29000, Requested 2000. Please try again in 2.5s. Visit",
            2.5,
        ),
        ("Please try again in 1m30.5s.", 90.5),
        ("retry after 20 seconds", 20.0),
        ("please try again in 6ms", 0.006),
    ] {
        assert_eq!(body_wait(&empty, words), Some(secs(want)), "{words}");
    }
    for words in ["Too many requests", "wait for the server", "Overloaded"] {
        assert_eq!(body_wait(&empty, words), None, "{words}");
    }
}
