//! `provider: openai` — any OpenAI-compatible chat-completions endpoint (OpenAI itself,
//! vLLM, llama.cpp, Ollama, LM Studio, OpenRouter, LiteLLM, …), streamed over SSE.
//!
//! The HTTP plumbing is shared ([`crate::provider::sse::http`]); this module says where to
//! send the request, how to authenticate, and how to read a `data:` chunk.

mod convert;
mod wire;

use std::time::Duration;

use futures_util::stream;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::Value;

use super::sse::SseEvent;
use super::sse::classify::{classify, error_in_json};
use super::sse::http::{self, Dialect, MAX_RESPONSE_BYTES};
use super::{ChatRequest, EventStream, ModelClient, ModelInfo, ProviderError, StreamEvent};
use crate::secret::Secret;

/// OpenAI's own endpoint, used when a job names no `api_base`.
pub const DEFAULT_API_BASE: &str = "https://api.openai.com/v1";

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL; the request goes to `{api_base}/chat/completions`.
    pub api_base: String,
    /// Sent as `Authorization: Bearer …` when set (local servers often need none).
    pub api_key: Option<Secret>,
    pub model: String,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    pub connect_timeout: Duration,
    /// A limit on the whole request, body included; `None` leaves it to the idle timeout.
    pub request_timeout: Option<Duration>,
}

impl OpenAiConfig {
    /// A config with no key, no extra headers, a 30 s connect timeout and no request timeout.
    pub fn new(api_base: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            api_base: api_base.into(),
            api_key: None,
            model: model.into(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(30),
            request_timeout: None,
        }
    }
}

/// A client for one OpenAI-compatible endpoint and model.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    url: String,
    headers: HeaderMap,
    model: String,
    key: Option<Secret>,
}

impl OpenAiClient {
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let url = http::endpoint(&config.api_base, "chat/completions")?;
        let key = config.api_key.filter(|key| !key.is_empty());
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        http::add_headers(&mut headers, &config.headers)?;
        if let Some(key) = &key {
            let value = http::sensitive(&format!("Bearer {}", key.expose()))?;
            headers.insert(AUTHORIZATION, value);
        }
        Ok(OpenAiClient {
            http: http::build_client(
                config.connect_timeout,
                config.request_timeout,
                &config.api_base,
            )?,
            url,
            headers,
            model: config.model,
            key,
        })
    }

    /// A `200 application/json` answer: an error object, or a server that ignored
    /// `stream: true` and sent the whole completion at once.
    async fn json_reply(&self, response: reqwest::Response) -> Result<EventStream, ProviderError> {
        let body = http::read_body(response, MAX_RESPONSE_BYTES, self.key.as_ref(), false).await?;
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Decode(format!("the JSON response is invalid: {e}")))?;
        if let Some(info) = error_in_json(&value) {
            return Err(classify(200, &info, None, self.key.as_ref()));
        }
        if value.get("choices").is_none() {
            return Err(ProviderError::Decode(
                "the JSON response is neither a completion nor an error".into(),
            ));
        }
        let chunk = serde_json::from_value(value)
            .map_err(|e| ProviderError::Decode(format!("unexpected completion shape: {e}")))?;
        let mut events = Vec::new();
        convert::chunk_events(chunk, &mut events);
        Ok(Box::pin(stream::iter(events.into_iter().map(Ok))))
    }
}

#[async_trait::async_trait]
impl ModelClient for OpenAiClient {
    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError> {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        };
        let body = serde_json::to_vec(&convert::request(request, model))
            .map_err(|e| ProviderError::Decode(format!("cannot encode the request: {e}")))?;
        let key = self.key.as_ref();
        let response = http::post(&self.http, &self.url, self.headers.clone(), body, key).await?;
        let kind = http::content_type(&response);
        if http::is_html(&kind) {
            return Err(http::html_page_error(response, key).await);
        }
        if kind.starts_with("application/json") {
            return self.json_reply(response).await;
        }
        let dialect = OpenAiDialect {
            finished: false,
            key: self.key.clone(),
        };
        Ok(http::event_stream(response, dialect, self.key.clone()))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: "openai".into(),
            model: self.model.clone(),
        }
    }
}

/// Reads `data:` chunks until `data: [DONE]`.
struct OpenAiDialect {
    finished: bool,
    key: Option<Secret>,
}

/// The dialect with no key, for the fuzz entry points (`crate::provider::fuzz`).
pub(super) fn fuzz_dialect() -> impl Dialect {
    OpenAiDialect {
        finished: false,
        key: None,
    }
}

impl Dialect for OpenAiDialect {
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::Decode(format!("a stream chunk is not JSON: {e}")))?;
        if let Some(info) = error_in_json(&value) {
            return Err(classify(200, &info, None, self.key.as_ref()));
        }
        let chunk = serde_json::from_value(value)
            .map_err(|e| ProviderError::Decode(format!("unexpected stream chunk: {e}")))?;
        if convert::chunk_events(chunk, out) {
            self.finished = true;
        }
        Ok(false)
    }

    fn may_end(&self) -> bool {
        self.finished
    }
}
