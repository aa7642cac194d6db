//! `tools/list` over streamable HTTP, read from its raw bytes. The SDK parses an answer into
//! its own tool type, which has no `execution` field; it only showed cn-run the raw text of
//! answers framed as server-sent events, so a server answering with a plain JSON body hid its
//! task-only tools. cn-run sends this one request itself: the answer, in either framing, has
//! its raw text noted by [`TaskOnly::note`] (the same reading stdio lines get) and then goes
//! to the SDK as if the SDK had read it.

use std::collections::HashMap;

use futures_util::{StreamExt, TryStreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::SseStream;

use super::line_guard::TaskOnly;

/// Whether `message` asks for (a page of) the tool list.
pub(crate) fn is_tool_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r)
        if matches!(r.request, ClientRequest::ListToolsRequest(_)))
}

/// What the request carries besides the message.
pub(crate) struct Post<'a> {
    pub(crate) uri: &'a str,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) auth_header: Option<&'a str>,
    pub(crate) headers: &'a HashMap<HeaderName, HeaderValue>,
    pub(crate) limits: &'a StreamableHttpResponseLimits,
}

/// The server's answer when it was a success in JSON or SSE; `None` when the SDK should send
/// the request again and read the answer itself (a failure status, another content type, a
/// body it cannot parse: the SDK words those). Listing tools changes nothing on the server,
/// so sending it twice is harmless.
pub(crate) async fn send(
    client: &reqwest::Client,
    post: Post<'_>,
    message: &ClientJsonRpcMessage,
    task_only: &TaskOnly,
) -> Option<StreamableHttpPostResponse> {
    let mut request = client
        .post(post.uri)
        .header(ACCEPT, "text/event-stream, application/json")
        .json(message);
    if let Some(token) = post.auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in post.headers {
        request = request.header(name, value);
    }
    if let Some(session) = post.session_id {
        request = request.header("Mcp-Session-Id", session);
    }
    let response = request.send().await.ok()?;
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    let session = response
        .headers()
        .get("Mcp-Session-Id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match framing(response.headers().get(CONTENT_TYPE))? {
        Framing::Json => {
            let body = bounded_body(response, post.limits.max_json_response_size).await?;
            task_only.note(&body);
            let parsed = serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok()?;
            Some(StreamableHttpPostResponse::Json(parsed, session))
        }
        Framing::Sse => {
            let events = bounded_events(response, post.limits.max_sse_event_size);
            Some(StreamableHttpPostResponse::Sse(events, session))
        }
    }
}

/// The answer's events; past `limit` bytes in all the stream fails with the SDK's wording
/// for an event over its limit (which [`super::http_guard`] turns into a "too large" answer).
fn bounded_events(response: reqwest::Response, limit: usize) -> super::http_guard::Events {
    let mut seen = 0usize;
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        seen = seen.saturating_add(chunk.len());
        if seen > limit {
            return Err(std::io::Error::other(format!(
                "the tool list exceeded the maximum size of {limit} bytes"
            )));
        }
        Ok(chunk)
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

enum Framing {
    Json,
    Sse,
}

/// The framing a `Content-Type` names (its essence, any case, parameters ignored).
fn framing(content_type: Option<&HeaderValue>) -> Option<Framing> {
    let value = content_type?.to_str().ok()?;
    let essence = value.split(';').next()?.trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Some(Framing::Json)
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        Some(Framing::Sse)
    } else {
        None
    }
}

/// The whole body, or `None` past `limit` bytes (the SDK then reads it and says so).
async fn bounded_body(response: reqwest::Response, limit: usize) -> Option<Vec<u8>> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return None;
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.try_next().await.ok()? {
        if chunk.len() > limit.saturating_sub(body.len()) {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_read_by_their_essence() {
        let json = [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=1",
        ];
        for value in json {
            let header = HeaderValue::from_static(value);
            assert!(
                matches!(framing(Some(&header)), Some(Framing::Json)),
                "{value}"
            );
        }
        let sse = ["text/event-stream", "TEXT/Event-Stream;charset=UTF-8"];
        for value in sse {
            let header = HeaderValue::from_static(value);
            assert!(
                matches!(framing(Some(&header)), Some(Framing::Sse)),
                "{value}"
            );
        }
        for value in ["text/plain", "application/jsonl", "text/html"] {
            assert!(
                framing(Some(&HeaderValue::from_static(value))).is_none(),
                "{value}"
            );
        }
        assert!(framing(None).is_none());
    }
}
