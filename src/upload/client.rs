//! One upload PUT with retries: the content type, the server-side-encryption header a
//! presigned URL may require, timeouts, and exponential backoff with jitter for 429, 5xx
//! and network errors (other statuses are final). Redirects are not followed: a PUT body
//! must not be sent on to a host the URL did not name.
//!
//! Messages name the URL by [`display_url`] only and never carry `reqwest`'s own URL text,
//! because a presigned URL's query string is a credential.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use tokio::time::Instant;

use super::UploadError;
use super::target::{display_url, wants_sse};

/// Timeouts, retries and the cap on the final upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadPolicy {
    pub connect_timeout: Duration,
    /// For one request, body included.
    pub request_timeout: Duration,
    /// Tries per PUT, the first included.
    pub attempts: u32,
    /// Delay before the first retry; it doubles per retry, up to `max_delay`, and is then
    /// multiplied by a random factor in [0.5, 1).
    pub initial_delay: Duration,
    pub max_delay: Duration,
    /// The most the final upload may take, so a dead server never holds a run long.
    pub final_cap: Duration,
}

impl Default for UploadPolicy {
    fn default() -> Self {
        UploadPolicy {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            attempts: 3,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
            final_cap: Duration::from_secs(30),
        }
    }
}

impl UploadPolicy {
    /// The delay before retry `retry` (1-based), with jitter.
    fn delay(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        let base = self
            .initial_delay
            .saturating_mul(factor)
            .min(self.max_delay);
        base.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// How one PUT ended (after its retries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PutOutcome {
    pub ok: bool,
    /// The HTTP status of the last response, if one came.
    pub status: Option<u16>,
    /// Why it failed, safe to log.
    pub error: Option<String>,
}

impl PutOutcome {
    pub(crate) fn failed(status: Option<u16>, error: String) -> PutOutcome {
        PutOutcome {
            ok: false,
            status,
            error: Some(error),
        }
    }
}

/// The HTTP client for uploads.
pub(crate) fn build_client(policy: &UploadPolicy) -> Result<reqwest::Client, UploadError> {
    reqwest::Client::builder()
        .connect_timeout(policy.connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("cn-run/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| UploadError::Client(e.without_url().to_string()))
}

/// One attempt's result: the outcome, and whether another attempt may help (and after how
/// long the server asked us to wait).
struct Attempt {
    outcome: PutOutcome,
    retry: bool,
    retry_after: Option<Duration>,
}

/// PUT `body` to `url`, retrying per `policy` but never past `deadline`.
pub(crate) async fn put(
    client: &reqwest::Client,
    url: &Url,
    content_type: &'static str,
    body: &[u8],
    policy: &UploadPolicy,
    deadline: Option<Instant>,
) -> PutOutcome {
    let shown = display_url(url);
    let mut tries = 0;
    loop {
        tries += 1;
        let timeout = match deadline {
            Some(d) => policy
                .request_timeout
                .min(d.saturating_duration_since(Instant::now())),
            None => policy.request_timeout,
        };
        let attempt = once(client, url, content_type, body, timeout, &shown).await;
        if attempt.outcome.ok || !attempt.retry || tries >= policy.attempts.max(1) {
            return attempt.outcome;
        }
        let wait = attempt
            .retry_after
            .map_or_else(|| policy.delay(tries), |d| d.min(policy.max_delay));
        if deadline.is_some_and(|d| Instant::now() + wait >= d) {
            return attempt.outcome;
        }
        tracing::debug!(
            "upload to {shown} failed ({}); retrying in {} ms",
            attempt.outcome.error.as_deref().unwrap_or("?"),
            wait.as_millis()
        );
        tokio::time::sleep(wait).await;
    }
}

async fn once(
    client: &reqwest::Client,
    url: &Url,
    content_type: &'static str,
    body: &[u8],
    timeout: Duration,
    shown: &str,
) -> Attempt {
    let mut request = client
        .put(url.clone())
        .timeout(timeout)
        .header(CONTENT_TYPE, HeaderValue::from_static(content_type))
        .body(body.to_vec());
    if wants_sse(url) {
        request = request.header("x-amz-server-side-encryption", "AES256");
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return Attempt {
                outcome: PutOutcome::failed(None, format!("PUT {shown}: {}", describe(e, url))),
                retry: true,
                retry_after: None,
            };
        }
    };
    let status = response.status();
    if status.is_success() {
        return Attempt {
            outcome: PutOutcome {
                ok: true,
                status: Some(status.as_u16()),
                error: None,
            },
            retry: false,
            retry_after: None,
        };
    }
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let code = response.text().await.ok().and_then(|t| s3_code(&t));
    let detail = code.map(|c| format!(" ({c})")).unwrap_or_default();
    Attempt {
        outcome: PutOutcome::failed(
            Some(status.as_u16()),
            format!("PUT {shown}: HTTP {}{detail}", status.as_u16()),
        ),
        retry: status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT
            || status.is_server_error(),
        retry_after,
    }
}

/// A network error in words, without the URL `reqwest` would print.
fn describe(e: reqwest::Error, url: &Url) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let e = e.without_url();
    let mut text = kind.to_owned();
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    // Belt and braces: no part of the query string survives, whatever a library printed.
    match url.query().filter(|q| !q.is_empty()) {
        Some(q) => text.replace(q, "…"),
        None => text,
    }
}

/// The `<Code>` of an S3-style XML error body (`AccessDenied`, `SignatureDoesNotMatch`, …).
/// Only the code: the rest of such a body can echo the signed request.
fn s3_code(body: &str) -> Option<String> {
    let start = body.find("<Code>")? + "<Code>".len();
    let len = body[start..].find("</Code>")?;
    let code = &body[start..start + len];
    (!code.is_empty() && code.len() <= 64 && code.chars().all(|c| c.is_ascii_alphanumeric()))
        .then(|| code.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_doubles_is_capped_and_jittered() {
        let p = UploadPolicy {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..UploadPolicy::default()
        };
        for _ in 0..50 {
            let d1 = p.delay(1);
            let d2 = p.delay(2);
            let d5 = p.delay(5);
            assert!((50..100).contains(&d1.as_millis()), "{d1:?}");
            assert!((100..200).contains(&d2.as_millis()), "{d2:?}");
            assert!((150..300).contains(&d5.as_millis()), "{d5:?}");
        }
    }

    #[test]
    fn s3_code_is_taken_alone() {
        let body = "<Error><Code>SignatureDoesNotMatch</Code><StringToSign>X-Amz-Credential=AKIA</StringToSign></Error>";
        assert_eq!(s3_code(body).as_deref(), Some("SignatureDoesNotMatch"));
        assert_eq!(s3_code("<Code>a b</Code>"), None);
        assert_eq!(s3_code("plain text"), None);
    }
}
