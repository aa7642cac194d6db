//! The HTTP side both streaming providers share: building the client, posting a request,
//! turning a failed response into a classified error, and turning a streaming body into an
//! [`EventStream`] through a provider-specific [`Dialect`].
//!
//! Kept apart from the wire formats so that OpenAI and Anthropic differ only in how they read
//! one SSE event; byte limits, the "stream ended early" rule and network-error wording are
//! decided once, here.

use std::collections::VecDeque;
use std::error::Error as _;
use std::time::Duration;

use futures_util::stream;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use super::classify::{classify, error_in_body, retry_after, scrub};
use super::not_a_stream::Preview;
use super::{SseDecoder, SseEvent};
use crate::provider::{EventStream, ProviderError, StreamEvent};
use crate::secret::Secret;

/// The most bytes one response may have, so a hostile server cannot exhaust memory.
pub(crate) const MAX_RESPONSE_BYTES: usize = 32 << 20;
/// The largest single SSE event.
const MAX_EVENT_BYTES: usize = 8 << 20;
/// How much of an error body is read.
const MAX_ERROR_BODY: usize = 64 << 10;

/// The longest one model request may take, streaming included, when the job sets no
/// `model.request_timeout`: a server that sends only keep-alive comments cannot hold a run.
pub(crate) const DEFAULT_REQUEST_CEILING: Duration = Duration::from_secs(10 * 60);

/// Redirects are followed only to the same scheme, host and port (at most 5): the
/// conversation and the key never go to a host the job did not name.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().cloned();
        let same = first.is_some_and(|from| {
            let to = attempt.url();
            from.scheme() == to.scheme()
                && from.host_str() == to.host_str()
                && from.port_or_known_default() == to.port_or_known_default()
        });
        if !same {
            let to = attempt.url().to_string();
            attempt.error(format!(
                "the provider redirected to another host ({to}); cn-run does not follow it"
            ))
        } else if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// How a provider reads its SSE events.
pub(crate) trait Dialect: Send + 'static {
    /// Translates one event into stream events. `Ok(true)` means the provider's end marker
    /// arrived and the rest of the body can be ignored.
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError>;

    /// Whether the body may end here without the end marker (a finish reason was seen).
    fn may_end(&self) -> bool;
}

/// Whether `api_base` is a plain-`http` endpoint (a local model server): its client needs
/// no TLS roots.
pub(crate) fn plain_http(api_base: &str) -> bool {
    api_base.trim_start().starts_with("http://")
}

/// A reqwest client for `api_base` with the configured timeouts and our user agent. For a
/// [plain-`http`](plain_http) endpoint no TLS roots are loaded: reading the system's
/// certificates costs milliseconds at every start and such a client never needs them.
pub(crate) fn build_client(
    connect_timeout: Duration,
    request_timeout: Option<Duration>,
    api_base: &str,
) -> Result<reqwest::Client, ProviderError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(same_origin_redirects())
        .user_agent(concat!("cn-run/", env!("CARGO_PKG_VERSION")));
    if plain_http(api_base) {
        builder = builder.tls_certs_only(Vec::new());
    }
    // A ceiling on the whole request, body included: keep-alive comments cannot extend it.
    builder = builder.timeout(request_timeout.unwrap_or(DEFAULT_REQUEST_CEILING));
    builder
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))
}

/// `{api_base}/{path}`, tolerating a trailing slash on the base. A query string on the base
/// (Azure's `?api-version=…`) stays at the end, after the path.
pub(crate) fn endpoint(api_base: &str, path: &str) -> Result<String, ProviderError> {
    let trimmed = api_base.trim();
    let (base, query) = trimmed
        .split_once('?')
        .map_or((trimmed, None), |(b, q)| (b, Some(q)));
    let base = base.trim_end_matches('/');
    let parsed = reqwest::Url::parse(base)
        .map_err(|e| ProviderError::Config(format!("api_base {base:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ProviderError::Config(format!(
            "api_base {base:?} must start with http:// or https://"
        )));
    }
    Ok(match query.filter(|q| !q.is_empty()) {
        Some(query) => format!("{base}/{path}?{query}"),
        None => format!("{base}/{path}"),
    })
}

/// Adds configured extra headers to `headers`.
pub(crate) fn add_headers(
    headers: &mut HeaderMap,
    extra: &[(String, String)],
) -> Result<(), ProviderError> {
    for (name, value) in extra {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ProviderError::Config(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| ProviderError::Config(format!("invalid value for header {name:?}")))?;
        headers.insert(header, value);
    }
    Ok(())
}

/// A header value that debug output of the request must not show.
pub(crate) fn sensitive(value: &str) -> Result<HeaderValue, ProviderError> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| ProviderError::Config("the API key contains invalid characters".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// Posts `body` and returns the response if its status is a success; otherwise the
/// classified error.
pub(crate) async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    body: Vec<u8>,
    secret: Option<&Secret>,
) -> Result<reqwest::Response, ProviderError> {
    let response = client
        .post(url)
        .headers(headers)
        .header(CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| network_error(&e, secret))?;
    let status = response.status().as_u16();
    if response.status().is_success() {
        return Ok(response);
    }
    let wait = retry_after(response.headers());
    let content_type = content_type(&response);
    let body = read_body(response, MAX_ERROR_BODY, secret, true).await?;
    let info = error_in_body(&body, &content_type);
    Err(classify(status, &info, wait, secret))
}

/// The response's content type, lowercased ("" when absent).
pub(crate) fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether a successful response is a web page rather than a stream: a captive portal, a
/// proxy's login page, or an `api_base` that points at a website.
pub(crate) fn is_html(content_type: &str) -> bool {
    content_type.starts_with("text/html") || content_type.starts_with("application/xhtml")
}

/// The error for a `200` web page (see [`is_html`]): its text, without tags, and a hint.
/// Not retried: the same URL will serve the same page.
pub(crate) async fn html_page_error(
    response: reqwest::Response,
    secret: Option<&Secret>,
) -> ProviderError {
    let content_type = content_type(&response);
    let body = match read_body(response, MAX_ERROR_BODY, secret, true).await {
        Ok(body) => body,
        Err(err) => return err,
    };
    let page = error_in_body(&body, &content_type).message;
    ProviderError::BadRequest {
        status: 200,
        message: scrub(
            &format!(
                "expected an event stream, got a web page ({content_type}): \"{page}\"; check api_base"
            ),
            secret,
        ),
    }
}

/// Reads a whole body, up to `cap` bytes. With `truncate` the rest is ignored; without it,
/// a longer body is a `Decode` error.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    cap: usize,
    secret: Option<&Secret>,
    truncate: bool,
) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| network_error(&e, secret))?
    {
        let room = cap - body.len();
        if chunk.len() > room {
            if truncate {
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A network-level failure, worded from the whole error chain (the top-level reqwest
/// message alone rarely says what went wrong).
pub(crate) fn network_error(err: &reqwest::Error, secret: Option<&Secret>) -> ProviderError {
    let mut message = if err.is_timeout() {
        "the request timed out".to_string()
    } else {
        err.to_string()
    };
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    ProviderError::Network(scrub(&message, secret))
}

fn too_large() -> ProviderError {
    ProviderError::Decode(format!(
        "the response exceeds {} MiB",
        MAX_RESPONSE_BYTES >> 20
    ))
}

/// Streams a successful SSE response through `dialect`.
pub(crate) fn event_stream<D: Dialect>(
    response: reqwest::Response,
    dialect: D,
    secret: Option<Secret>,
) -> EventStream {
    let mut body = BodyDecoder::new(dialect);
    body.secret.clone_from(&secret);
    let state = BodyState {
        response,
        body,
        pending: VecDeque::new(),
        error: None,
        done: false,
        received: 0,
        secret,
    };
    Box::pin(stream::unfold(state, |mut st| async move {
        loop {
            if let Some(event) = st.pending.pop_front() {
                return Some((Ok(event), st));
            }
            if let Some(err) = st.error.take() {
                return Some((Err(err), st));
            }
            if st.done {
                return None;
            }
            if let Err(err) = st.pull().await {
                st.done = true;
                st.error = Some(err);
            }
        }
    }))
}

struct BodyState<D> {
    response: reqwest::Response,
    body: BodyDecoder<D>,
    pending: VecDeque<StreamEvent>,
    error: Option<ProviderError>,
    done: bool,
    received: usize,
    secret: Option<Secret>,
}

impl<D: Dialect> BodyState<D> {
    /// Reads one piece of the body and decodes what it completes.
    async fn pull(&mut self) -> Result<(), ProviderError> {
        let chunk = self
            .response
            .chunk()
            .await
            .map_err(|e| network_error(&e, self.secret.as_ref()))?;
        let bytes = match &chunk {
            Some(bytes) => {
                self.received += bytes.len();
                if self.received > MAX_RESPONSE_BYTES {
                    return Err(too_large());
                }
                Some(&bytes[..])
            }
            None => None,
        };
        self.done = self.body.feed(bytes, &mut self.pending)?;
        if !self.done && self.pending.is_empty() {
            self.pending.push_back(StreamEvent::KeepAlive);
        }
        Ok(())
    }
}

/// The pure half of a streaming body: bytes in, stream events out. Kept apart from the
/// network so the fuzz entry points (`crate::provider::fuzz`) run exactly this code.
pub(crate) struct BodyDecoder<D> {
    decoder: SseDecoder,
    dialect: D,
    /// The start of a body that has produced no event yet (not_a_stream.rs).
    preview: Preview,
    secret: Option<Secret>,
}

impl<D: Dialect> BodyDecoder<D> {
    pub(crate) fn new(dialect: D) -> Self {
        BodyDecoder {
            decoder: SseDecoder::new(MAX_EVENT_BYTES),
            dialect,
            preview: Preview::default(),
            secret: None,
        }
    }

    /// Decodes the next piece of the body (`None`: the body ended) and appends the stream
    /// events it completes to `out`. Returns whether the stream is complete: the provider's
    /// end marker arrived, or the body ended where it may.
    pub(crate) fn feed(
        &mut self,
        chunk: Option<&[u8]>,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        if let Some(bytes) = chunk {
            self.preview.keep(bytes);
        }
        let events = match chunk {
            Some(bytes) => self.decoder.push(bytes)?,
            None => self.decoder.finish()?,
        };
        if !events.is_empty() {
            self.preview.streaming();
        } else if let Some(err) = self.preview.verdict(chunk.is_none(), self.secret.as_ref()) {
            return Err(err);
        }
        for event in events {
            let mut batch = Vec::new();
            let ended = self.dialect.on_event(event, &mut batch)?;
            out.extend(batch);
            if ended {
                return Ok(true);
            }
        }
        if chunk.is_none() && !self.dialect.may_end() {
            return Err(ProviderError::Network(
                "stream ended early: the connection closed before the response was complete".into(),
            ));
        }
        Ok(chunk.is_none())
    }
}
