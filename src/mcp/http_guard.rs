//! The HTTP side of what [`super::line_guard`] does for stdio: the SDK's HTTP client wrapped so
//! that an answer over the size limit ends its call at once with a "too large" error (the SDK
//! would report a broken stream, read as "the server can no longer be reached"), and so that
//! tools listed with `execution.taskSupport: "required"` are noted (the SDK drops that field):
//! `tools/list` is sent by [`super::http_list`], which reads its answer raw whether it comes
//! as a plain JSON body or as server-sent events.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, RequestId, RequestParamsMeta as _, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::line_guard::{TOO_LARGE_CODE, TaskOnly};

pub(crate) type Events = BoxStream<'static, Result<Sse, SseError>>;
type Answer = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// `reqwest::Client` with the two promises above.
#[derive(Clone)]
pub(crate) struct Guarded {
    inner: reqwest::Client,
    task_only: TaskOnly,
}

impl Guarded {
    /// No idle connections kept (the SDK's choice: a reused connection can stall on a
    /// delayed ACK) and no redirects followed (headers often hold tokens).
    pub(crate) fn new(task_only: TaskOnly) -> Result<Self, super::start_failure::StartFailure> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(super::start_failure::StartFailure::Client)?;
        Ok(Guarded { inner, task_only })
    }

    /// The events of one answer: task-only tools noted, an over-size event replaced by an
    /// error answer to `id` (the stream ends after it, as the SDK's bounded stream does).
    fn watch(&self, events: Events, id: Option<RequestId>) -> Events {
        let task_only = self.task_only.clone();
        events
            .map(move |item| match item {
                Ok(event) => {
                    if let Some(data) = event.data.as_deref()
                        && data.contains("\"taskSupport\"")
                    {
                        task_only.note(data.as_bytes());
                    }
                    Ok(event)
                }
                Err(e) => match (&id, size_limit(&e)) {
                    (Some(id), Some(limit)) => Ok(Sse {
                        data: Some(too_large(id, limit).to_string()),
                        ..Sse::default()
                    }),
                    _ => Err(e),
                },
            })
            .boxed()
    }

    fn answer(&self, answer: Answer, id: Option<RequestId>) -> Answer {
        match answer {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.watch(events, id), session),
            ),
            Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) if id.is_some() => {
                let message = id.as_ref().map(|id| too_large(id, max_size));
                match message.and_then(|m| serde_json::from_value::<ServerJsonRpcMessage>(m).ok()) {
                    Some(message) => Ok(StreamableHttpPostResponse::Json(message, None)),
                    None => Err(StreamableHttpError::ResponseBodyTooLarge { max_size }),
                }
            }
            other => other,
        }
    }
}

/// The id of a request (the answer to a notification needs none).
fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// A tool call's trace context (`_meta.traceparent`, `_meta.tracestate`) also as the W3C
/// headers, for servers whose HTTP middleware reads those.
fn trace_headers(message: &ClientJsonRpcMessage, headers: &mut HashMap<HeaderName, HeaderValue>) {
    let ClientJsonRpcMessage::Request(request) = message else {
        return;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return;
    };
    let pairs = [
        ("traceparent", call.params.traceparent()),
        ("tracestate", call.params.tracestate()),
    ];
    for (name, value) in pairs {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

/// The limit an event went over, when that is why the stream failed.
fn size_limit(error: &SseError) -> Option<usize> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        if let Some(rest) = text.split("exceeded the maximum size of ").nth(1) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            return digits.parse().ok();
        }
        current = e.source();
    }
    None
}

/// The JSON-RPC error answer that replaces an answer over `limit` bytes.
fn too_large(id: &RequestId, limit: usize) -> serde_json::Value {
    let message = format!(
        "the answer was over the {} MiB one message over HTTP may take, and was dropped; ask \
         for less at once (a narrower query, a page or a range)",
        limit / (1024 * 1024)
    );
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": TOO_LARGE_CODE, "message": message},
    })
}

impl StreamableHttpClient for Guarded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Answer {
        let id = request_id(&message);
        let mut custom_headers = custom_headers;
        trace_headers(&message, &mut custom_headers);
        if super::http_list::is_tool_list(&message) {
            let post = super::http_list::Post {
                uri: &uri,
                session_id: session_id.as_deref(),
                auth_header: auth_header.as_deref(),
                headers: &custom_headers,
                limits: &limits,
            };
            let raw = super::http_list::send(&self.inner, post, &message, &self.task_only);
            if let Some(answer) = raw.await {
                return self.answer(Ok(answer), id);
            }
        }
        let answer = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.answer(answer, id)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<reqwest::Error>> {
        let events = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.watch(events, None))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<reqwest::Error>> {
        let events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.watch(events, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replacement_answer_is_a_server_error_for_the_same_id() {
        let value = too_large(&RequestId::Number(7), 16 * 1024 * 1024);
        assert_eq!(value["id"], 7);
        assert!(
            value["error"]["message"]
                .as_str()
                .unwrap()
                .contains("16 MiB")
        );
        assert!(serde_json::from_value::<ServerJsonRpcMessage>(value).is_ok());
    }
}
