//! The model side of the agent loop: one trait, [`ModelClient`], and the provider-neutral
//! request and stream types every provider translates to and from its wire format.
//!
//! The agent never sees a concrete provider. It calls [`complete`], which opens a stream,
//! retries what is worth retrying, and assembles the streamed deltas into one
//! [`AssistantTurn`].

pub mod anthropic;
mod collect;
mod connection;
mod error;
pub mod family;
#[doc(hidden)]
pub mod fuzz;
mod model_params;
pub mod openai;
mod overflow;
pub mod script;
mod sse;
mod stop_words;
mod turn_order;

pub use collect::{MAX_RETRY_WAIT, Notice, RetryPolicy, complete};
pub use connection::Connection;
pub use error::ProviderError;
pub use family::{ClientSettings, Family, FamilyError, ProviderKind};
pub(crate) use sse::http::plain_http;

use std::borrow::Cow;
use std::pin::Pin;

use futures_util::Stream;
use serde::{Deserialize, Serialize};

use crate::conversation::{Message, Reasoning, ThinkingBlock, ToolCall, ToolSpec, Usage};

/// Everything one model request needs. The messages are borrowed from the run's history
/// where they go as they are: a long run's history is not copied into each request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest<'a> {
    pub model: String,
    pub system: String,
    pub messages: Cow<'a, [Message]>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// Why the model stopped producing output (`stop_words.rs` reads each server's word).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// The output-token limit (`length`, `max_tokens`).
    Length,
    /// A safety system stopped or refused the answer; the server's word (`content_filter`,
    /// `refusal`, `SAFETY`, …).
    ContentFilter(String),
    /// The model's context window filled while it answered (`model_context_window_exceeded`,
    /// Mistral's `model_length`): the history is compacted, not continued.
    ContextWindow(String),
    /// Anthropic's `pause_turn`: a long turn paused; the model is asked to go on.
    Pause,
    /// The server ended the answer because of its own failure (`error`, vLLM's `abort`,
    /// DeepSeek's `insufficient_system_resource`): the request is sent again.
    Failed(String),
    /// A word no table knows: the answer is taken as final, with a warning.
    Other(String),
}

impl FinishReason {
    /// The reason in OpenAI's words (`stop`, `tool_calls`, `length`, `content_filter`),
    /// Anthropic's for the stops OpenAI has no word for (`model_context_window_exceeded`,
    /// `pause_turn`), or the server's own word for any other.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter(_) => "content_filter",
            FinishReason::ContextWindow(_) => "model_context_window_exceeded",
            FinishReason::Pause => "pause_turn",
            FinishReason::Failed(word) | FinishReason::Other(word) => word,
        }
    }
}

/// One piece of a streamed response, already decoded from the provider's wire format.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A piece of the model's visible reasoning, and the field it came in
    /// (`reasoning_content` or `reasoning`): kept to be sent back under that name, never part
    /// of the answer.
    ReasoningDelta {
        text: String,
        field: &'static str,
    },
    /// A whole Anthropic thinking block with its signature, kept byte for byte.
    Thinking(ThinkingBlock),
    /// A piece of OpenRouter's `reasoning_details` (joined with the pieces of the same
    /// `index`), to be sent back with the message.
    ReasoningDetail(serde_json::Value),
    /// A fragment of a tool call. `index` identifies the call within the response when the
    /// server sends one; without it the `id` does (Gemini). `id` and `name` arrive with the
    /// first fragment (some servers repeat them, some send `""` on later ones); `arguments`
    /// is a piece of the JSON argument text, to be concatenated in order; `extra` is opaque
    /// data the server wants back on this call (Gemini's `extra_content`).
    ToolCallDelta {
        index: Option<usize>,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
        extra: Option<serde_json::Value>,
    },
    Usage(Usage),
    Finish(FinishReason),
    /// The server sent bytes that carry no content (an SSE comment, a `ping`, a reasoning
    /// delta, part of a large event): it is alive, so the idle timeout starts again.
    KeepAlive,
}

/// A boxed stream of decoded events; errors mid-stream arrive as items.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// What the client is talking to, for events and results (never includes secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    pub provider: String,
    pub model: String,
}

/// A model provider. Implementations live in submodules and are wired only in `app`.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    /// Open one streaming request. Failures before the response body starts are returned
    /// here; failures while streaming arrive as `Err` items of the stream.
    async fn stream(&self, request: &ChatRequest<'_>) -> Result<EventStream, ProviderError>;

    fn info(&self) -> ModelInfo;
}

/// One complete assistant response.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish: Option<FinishReason>,
    /// The provider's reasoning state, to keep with the message in the history.
    pub reasoning: Reasoning,
}
