//! `provider: openai` — any OpenAI-compatible chat-completions endpoint (OpenAI itself,
//! vLLM, llama.cpp, Ollama, LM Studio, OpenRouter, LiteLLM, …), streamed over SSE.
//!
//! The client plumbing is shared with Anthropic ([`crate::provider::sse::endpoint`],
//! [`crate::provider::sse::http`]); this module says where to send the request, how to
//! authenticate, which parameters to send, and how to read a `data:` chunk.

mod convert;
mod images;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::stream;
use reqwest::header::{AUTHORIZATION, HeaderName};
use serde_json::Value;

use super::Connection;
use super::model_params::{self, OpenAiParams, Param};
use super::sse::SseEvent;
use super::sse::endpoint::{Endpoint, Reply, event_json};
use super::sse::http::{self, Dialect};
use super::turn_order;
use super::{ChatRequest, EventStream, ModelClient, ModelInfo, ProviderError, StreamEvent};
use crate::secret::Secret;

/// OpenAI's own endpoint, used when a job names no `api_base`.
pub const DEFAULT_API_BASE: &str = "https://api.openai.com/v1";

/// The `api-version` sent to Azure when the job names none (the latest GA version of the
/// data-plane inference API, learn.microsoft.com/azure/ai-foundry/openai/reference).
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// The base URL of an Azure OpenAI deployment: `{resource}/openai/deployments/{deployment}`
/// with `?api-version=…`. A `resource` that already has an `/openai/` path is kept as it is
/// (only a missing `api-version` is added), so a full deployment URL works too.
pub fn azure_api_base(resource: &str, deployment: &str, api_version: Option<&str>) -> String {
    let version = api_version.unwrap_or(AZURE_API_VERSION);
    let (path, query) = resource
        .trim()
        .split_once('?')
        .map_or((resource.trim(), None), |(p, q)| (p, Some(q)));
    let path = path.trim_end_matches('/');
    let path = if path.contains("/openai/") {
        path.to_owned()
    } else {
        format!("{path}/openai/deployments/{deployment}")
    };
    match query {
        // The v1 route takes no api-version (learn.microsoft.com, "API version lifecycle").
        _ if path.contains("/openai/v1") => resource.trim().to_owned(),
        Some(q) if q.contains("api-version=") => format!("{path}?{q}"),
        Some(q) if !q.is_empty() => format!("{path}?{q}&api-version={version}"),
        _ => format!("{path}?api-version={version}"),
    }
}

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL (the request goes to `{api_base}/chat/completions`), the key (sent as
    /// `Authorization: Bearer …` when set), model, headers and timeouts.
    pub connection: Connection,
    /// Ask for usage in the stream (`stream_options`); off for servers that refuse it.
    pub stream_usage: bool,
    /// How the key is sent: `Authorization: Bearer` (default) or Azure's `api-key` header.
    pub auth: AuthHeader,
}

/// The header that carries the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthHeader {
    #[default]
    Bearer,
    /// Azure OpenAI's `api-key: KEY` (the classic `/openai/deployments/…` route).
    ApiKey,
}

impl OpenAiConfig {
    /// A config with no key, no extra headers, a 30 s connect timeout and no request timeout.
    pub fn new(api_base: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            connection: Connection::new(api_base, model),
            stream_usage: true,
            auth: AuthHeader::default(),
        }
    }
}

/// A client for one OpenAI-compatible endpoint and model.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    endpoint: Endpoint,
    /// What the requests send; narrowed for the rest of the run when a server refuses a
    /// parameter by name.
    params: Arc<Mutex<Adjusted>>,
    /// The "temperature is not sent" warning was given.
    warned_sampling: Arc<AtomicBool>,
}

/// The family's parameters, and what a server refused.
#[derive(Debug, Clone, Copy)]
struct Adjusted {
    params: OpenAiParams,
    no_temperature: bool,
    no_output_limit: bool,
}

impl OpenAiClient {
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let c = &config.connection;
        let params = model_params::openai_params(&c.model, &c.api_base, config.stream_usage);
        let mut endpoint = Endpoint::new(config.connection, "chat/completions")?;
        let auth = if endpoint.url.contains("/openai/deployments/") {
            AuthHeader::ApiKey
        } else {
            config.auth
        };
        match auth {
            AuthHeader::Bearer => endpoint.set_key_header(AUTHORIZATION, "Bearer ")?,
            AuthHeader::ApiKey => {
                endpoint.set_key_header(HeaderName::from_static("api-key"), "")?
            }
        }
        Ok(OpenAiClient {
            endpoint,
            params: Arc::new(Mutex::new(Adjusted {
                params,
                no_temperature: false,
                no_output_limit: false,
            })),
            warned_sampling: Arc::new(AtomicBool::new(false)),
        })
    }

    fn adjusted(&self) -> Adjusted {
        *self.params.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The body for `request` with the parameters in force.
    fn body(&self, request: &ChatRequest<'_>, model: &str) -> Result<Vec<u8>, ProviderError> {
        let adjusted = self.adjusted();
        if request.temperature.is_some()
            && !adjusted.params.sampling
            && !self.warned_sampling.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "{model} is a reasoning model that accepts no temperature: it is not sent"
            );
        }
        let mut request = std::borrow::Cow::Borrowed(request);
        if adjusted.no_temperature || adjusted.no_output_limit {
            let owned = request.to_mut();
            if adjusted.no_temperature {
                owned.temperature = None;
            }
            if adjusted.no_output_limit {
                owned.max_tokens = None;
            }
        }
        serde_json::to_vec(&convert::request(&request, model, adjusted.params))
            .map_err(|e| ProviderError::Decode(format!("cannot encode the request: {e}")))
    }

    /// After a 400/422 that names a parameter we sent: change the parameters for this and
    /// every later request, warn once, and say whether the request is worth sending again.
    fn drop_refused(&self, error: &ProviderError, request: &ChatRequest<'_>) -> bool {
        let (ProviderError::BadRequest { message, .. } | ProviderError::ContextLength(message)) =
            error
        else {
            return false;
        };
        let mut guard = self.params.lock().unwrap_or_else(PoisonError::into_inner);
        let current = *guard;
        if turn_order::refuses_order(message) && !current.params.strict_order {
            guard.params.strict_order = true;
            tracing::warn!(
                "the server refused the order of the turns: sending the requests of this run in \
                 the strict order ({message})"
            );
            return true;
        }
        let sent = sent_params(current, request);
        let Some(param) = model_params::rejected_param(message, &sent) else {
            return false;
        };
        let next = &mut *guard;
        match param {
            Param::StreamOptions => next.params.stream_options = false,
            Param::Temperature => next.no_temperature = true,
            Param::MaxTokens if message.contains("max_completion_tokens") => {
                next.params.max_completion_tokens = true;
            }
            Param::MaxCompletionTokens => next.params.max_completion_tokens = false,
            Param::MaxTokens => next.no_output_limit = true,
        }
        tracing::warn!(
            "the server refused `{}`: sending the requests of this run without it ({})",
            param.name(),
            message
        );
        true
    }

    /// A `200 application/json` answer that is no error object: a server that ignored
    /// `stream: true` and sent the whole completion at once.
    fn whole_completion(value: Value) -> Result<EventStream, ProviderError> {
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
    async fn stream(&self, request: &ChatRequest<'_>) -> Result<EventStream, ProviderError> {
        let model = self.endpoint.model_for(request);
        let mut refusals = 0;
        let adjust = |error: &ProviderError| {
            let retry = refusals < MAX_REFUSALS && self.drop_refused(error, request);
            refusals += usize::from(retry);
            retry
        };
        let response = match self
            .endpoint
            .post(|| self.body(request, model), adjust)
            .await?
        {
            Reply::Stream(response) => response,
            Reply::Json(value) => return Self::whole_completion(value),
        };
        let key = self.endpoint.key().cloned();
        let dialect = OpenAiDialect {
            finished: false,
            key: key.clone(),
        };
        Ok(http::event_stream(response, dialect, key))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: "openai".into(),
            model: self.endpoint.model().to_owned(),
        }
    }
}

/// The parameters `request` sends under `adjusted`, in the order a refusal is matched.
fn sent_params(adjusted: Adjusted, request: &ChatRequest<'_>) -> Vec<Param> {
    let mut sent = Vec::new();
    if adjusted.params.stream_options {
        sent.push(Param::StreamOptions);
    }
    if request.temperature.is_some() && adjusted.params.sampling && !adjusted.no_temperature {
        sent.push(Param::Temperature);
    }
    if request.max_tokens.is_some() && !adjusted.no_output_limit {
        sent.push(if adjusted.params.max_completion_tokens {
            Param::MaxCompletionTokens
        } else {
            Param::MaxTokens
        });
    }
    sent
}

/// How many refused parameters one request drops before giving up.
const MAX_REFUSALS: usize = 3;

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
        let value = event_json(data, "chunk", self.key.as_ref())?;
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
