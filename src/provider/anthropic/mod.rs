//! `provider: anthropic` — the native Anthropic Messages API, streamed over SSE.
//!
//! Native rather than through an OpenAI-compatible shim because the native API gives what a
//! long agent run needs: explicit prompt caching (`cache_control`) and exact cache usage.

mod convert;
mod wire;

use std::sync::{Arc, Mutex, PoisonError};

use reqwest::header::HeaderName;
use serde_json::Value;

use super::Connection;
use super::model_params;
use super::sse::SseEvent;
use super::sse::endpoint::{Endpoint, Reply, event_json};
use super::sse::http::{self, Dialect};
use super::{ChatRequest, EventStream, ModelClient, ModelInfo, ProviderError, StreamEvent};
use crate::conversation::ThinkingBlock;
use crate::secret::Secret;
use convert::{Shape, UsageTally};
use wire::{BlockDelta, ContentBlock, Event};

/// Anthropic's own endpoint, used when a job names no `api_base`.
pub const DEFAULT_API_BASE: &str = "https://api.anthropic.com";
/// The API version header every request carries.
const API_VERSION: &str = "2023-06-01";

/// Settings of an Anthropic endpoint.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Base URL (the request goes to `{api_base}/v1/messages`), the key (sent as
    /// `x-api-key`), model, headers and timeouts.
    pub connection: Connection,
    /// Extended thinking with this token budget (`model.thinking.budget_tokens`).
    pub thinking_budget: Option<u32>,
}

impl AnthropicConfig {
    /// A config for the public API with no key, a 30 s connect timeout and no request timeout.
    pub fn new(model: impl Into<String>) -> Self {
        AnthropicConfig {
            connection: Connection::new(DEFAULT_API_BASE, model),
            thinking_budget: None,
        }
    }
}

/// A client for one Anthropic endpoint and model.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    endpoint: Endpoint,
    /// Thinking, and the output ceiling a server named (kept for the rest of the run).
    shape: Arc<Mutex<Shape>>,
}

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let mut endpoint = Endpoint::new(config.connection, "v1/messages")?;
        endpoint.default_header("anthropic-version", API_VERSION);
        endpoint.set_key_header(HeaderName::from_static("x-api-key"), "")?;
        Ok(AnthropicClient {
            endpoint,
            shape: Arc::new(Mutex::new(Shape {
                thinking: config.thinking_budget,
                ceiling: None,
            })),
        })
    }

    fn shape(&self) -> Shape {
        *self.shape.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// After a refusal of `max_tokens` that names the model's ceiling: use the ceiling from
    /// now on. Returns whether the request is worth sending again.
    fn lower_to_ceiling(&self, error: &ProviderError) -> bool {
        let ProviderError::BadRequest { message, .. } = error else {
            return false;
        };
        let Some(ceiling) = model_params::ceiling_in_error(message) else {
            return false;
        };
        let mut shape = self.shape.lock().unwrap_or_else(PoisonError::into_inner);
        if shape.ceiling.is_some_and(|c| c <= ceiling) {
            return false;
        }
        shape.ceiling = Some(ceiling);
        tracing::warn!("the server caps max_tokens at {ceiling} for this model; using that");
        true
    }
}

#[async_trait::async_trait]
impl ModelClient for AnthropicClient {
    async fn stream(&self, request: &ChatRequest<'_>) -> Result<EventStream, ProviderError> {
        let model = self.endpoint.model_for(request);
        let body = || {
            serde_json::to_vec(&convert::request(request, model, self.shape()))
                .map_err(|e| ProviderError::Decode(format!("cannot encode the request: {e}")))
        };
        let mut lowered = false;
        let adjust = |error: &ProviderError| {
            let retry = !lowered && self.lower_to_ceiling(error);
            lowered |= retry;
            retry
        };
        let response = match self.endpoint.post(body, adjust).await? {
            Reply::Stream(response) => response,
            // A `200 application/json` answer is never a stream here.
            Reply::Json(_) => {
                return Err(ProviderError::Decode(
                    "expected an event stream, got a JSON body".into(),
                ));
            }
        };
        let key = self.endpoint.key().cloned();
        let dialect = AnthropicDialect {
            usage: UsageTally::default(),
            stopped: false,
            key: key.clone(),
            thinking: None,
            tool_blocks: Vec::new(),
        };
        Ok(http::event_stream(response, dialect, key))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: "anthropic".into(),
            model: self.endpoint.model().to_owned(),
        }
    }
}

/// Reads Messages API events until `message_stop`.
struct AnthropicDialect {
    usage: UsageTally,
    stopped: bool,
    key: Option<Secret>,
    /// The thinking block being streamed: its index, text and signature so far.
    thinking: Option<(usize, String, String)>,
    /// The indices of this response's `tool_use` blocks: a server tool's input
    /// (`server_tool_use`, web search) streams too, but is no call for cn-run to run.
    tool_blocks: Vec<usize>,
}

/// The dialect with no key, for the fuzz entry points (`crate::provider::fuzz`).
pub(super) fn fuzz_dialect() -> impl Dialect {
    AnthropicDialect {
        usage: UsageTally::default(),
        stopped: false,
        key: None,
        thinking: None,
        tool_blocks: Vec::new(),
    }
}

impl Dialect for AnthropicDialect {
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let value = event_json(&event.data, "event", self.key.as_ref())?;
        let parsed: Event = serde_json::from_value(value)
            .map_err(|e| ProviderError::Decode(format!("unexpected stream event: {e}")))?;
        Ok(self.apply(parsed, out))
    }

    fn may_end(&self) -> bool {
        self.stopped
    }
}

impl AnthropicDialect {
    /// Translates one event; returns whether it was `message_stop`.
    fn apply(&mut self, event: Event, out: &mut Vec<StreamEvent>) -> bool {
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.update(&usage);
                    out.push(StreamEvent::Usage(self.usage.usage()));
                }
            }
            Event::ContentBlockStart {
                index,
                content_block:
                    ContentBlock::Thinking {
                        thinking,
                        signature,
                    },
            } => self.thinking = Some((index, thinking, signature)),
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                if matches!(content_block, ContentBlock::ToolUse { .. }) {
                    self.tool_blocks.push(index);
                }
                block_start(index, content_block, out);
            }
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => out.push(StreamEvent::TextDelta(text)),
                BlockDelta::ThinkingDelta { thinking } => {
                    if let Some((_, text, _)) = self.thinking.as_mut().filter(|t| t.0 == index) {
                        text.push_str(&thinking);
                    }
                    out.push(StreamEvent::KeepAlive);
                }
                BlockDelta::SignatureDelta { signature } => {
                    if let Some((_, _, sig)) = self.thinking.as_mut().filter(|t| t.0 == index) {
                        sig.push_str(&signature);
                    }
                }
                BlockDelta::InputJsonDelta { partial_json }
                    if self.tool_blocks.contains(&index) =>
                {
                    out.push(StreamEvent::ToolCallDelta {
                        index: Some(index),
                        id: None,
                        name: None,
                        arguments: partial_json,
                        extra: None,
                    });
                }
                BlockDelta::InputJsonDelta { .. } | BlockDelta::Other => {}
            },
            Event::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.usage.update(&usage);
                    out.push(StreamEvent::Usage(self.usage.usage()));
                }
                if let Some(reason) = delta.stop_reason {
                    self.stopped = true;
                    out.push(StreamEvent::Finish(convert::finish_reason(&reason)));
                }
            }
            Event::MessageStop => return true,
            Event::ContentBlockStop { index } => {
                if let Some((_, thinking, signature)) = self.thinking.take_if(|t| t.0 == index) {
                    out.push(StreamEvent::Thinking(ThinkingBlock::Thinking {
                        thinking,
                        signature,
                    }));
                }
            }
            Event::Ping | Event::Other => {}
        }
        false
    }
}

/// The opening of a content block: initial text, a tool call's id and name, or a whole
/// redacted thinking block.
fn block_start(index: usize, block: ContentBlock, out: &mut Vec<StreamEvent>) {
    match block {
        ContentBlock::RedactedThinking { data } => {
            out.push(StreamEvent::Thinking(ThinkingBlock::RedactedThinking {
                data,
            }));
        }
        ContentBlock::Text { text } if !text.is_empty() => out.push(StreamEvent::TextDelta(text)),
        ContentBlock::ToolUse { id, name, input } => {
            // Streamed tool input arrives in `input_json_delta`s; `input` is normally `{}`.
            let arguments = match input {
                Some(Value::Object(map)) if !map.is_empty() => Value::Object(map).to_string(),
                _ => String::new(),
            };
            out.push(StreamEvent::ToolCallDelta {
                index: Some(index),
                id: Some(id),
                name: Some(name),
                arguments,
                extra: None,
            });
        }
        _ => {}
    }
}
