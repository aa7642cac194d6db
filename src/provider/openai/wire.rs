//! The OpenAI chat-completions wire format: the request body we send and the stream chunks
//! we read. Only the fields cn-run uses are modelled; everything else a server sends is
//! ignored, and every field is optional on the way in because compatible servers (vLLM,
//! llama.cpp, Ollama, LM Studio, proxies) each leave out different ones.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /chat/completions` body.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: Vec<Message<'a>>,
    pub(crate) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_tokens: Option<u32>,
    /// The output limit of OpenAI's reasoning models, which refuse `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f64>,
}

#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub(crate) include_usage: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: std::borrow::Cow<'a, str>,
    },
    Assistant {
        /// `null` when the message only carries tool calls.
        content: Option<&'a str>,
        /// DeepSeek's thinking mode wants it back on messages that carry tool calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        /// The same for servers that name it `reasoning` (OpenRouter, Ollama).
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<&'a str>,
        /// OpenRouter's `reasoning_details`, back unmodified (reasoning.rs).
        #[serde(skip_serializing_if = "<[Value]>::is_empty")]
        reasoning_details: &'a [Value],
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: std::borrow::Cow<'a, str>,
    },
    /// A user message of parts: how images reach the model (src/provider/openai/images.rs).
    #[serde(rename = "user")]
    UserParts {
        content: Vec<Part>,
    },
}

/// One part of a user message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Part {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

/// An image as a `data:` URL.
#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl {
    pub(crate) url: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct ToolCall<'a> {
    pub(crate) id: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) function: FunctionCall<'a>,
    /// Gemini's thought signature, sent back exactly as it came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) extra_content: Option<&'a Value>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a str,
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) function: Function<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Function<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) parameters: &'a Value,
}

/// One `data:` chunk of the stream, or a whole non-streamed completion.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Chunk {
    pub(crate) choices: Option<Vec<Choice>>,
    pub(crate) usage: Option<Usage>,
    /// Groq puts the usage of a stream here, on the last chunk (console.groq.com/docs).
    pub(crate) x_groq: Option<XGroq>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct XGroq {
    #[serde(default)]
    pub(crate) usage: Option<Usage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Choice {
    /// Streamed chunks carry `delta`; a non-streamed completion carries `message`.
    pub(crate) delta: Option<Delta>,
    pub(crate) message: Option<Delta>,
    pub(crate) finish_reason: Option<String>,
    /// A few servers (Moonshot, some proxies) put usage on the choice.
    pub(crate) usage: Option<Usage>,
    /// Azure's per-category verdict: which filter stopped an answer.
    pub(crate) content_filter_results: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Delta {
    /// Text; Mistral's reasoning models send an array of `text`/`thinking` parts instead.
    pub(crate) content: Option<Value>,
    /// DeepSeek, Qwen, vLLM (reasoning parsers), llama.cpp (`--reasoning-format deepseek`).
    pub(crate) reasoning_content: Option<String>,
    /// OpenRouter, Ollama, LM Studio, newer vLLM.
    pub(crate) reasoning: Option<String>,
    /// OpenRouter's structured reasoning, in pieces by `index`.
    pub(crate) reasoning_details: Option<Vec<Value>>,
    pub(crate) tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCallDelta {
    pub(crate) index: Option<usize>,
    pub(crate) id: Option<String>,
    pub(crate) function: Option<FunctionDelta>,
    /// Gemini's `{"google": {"thought_signature": …}}`, wanted back on the call.
    pub(crate) extra_content: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FunctionDelta {
    pub(crate) name: Option<String>,
    /// A string fragment; a few servers send a whole JSON object instead.
    pub(crate) arguments: Option<Value>,
}

/// Token counts, wherever a server or gateway puts the cache's share (`convert.rs` reads
/// them in order of precedence).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
    pub(crate) prompt_tokens_details: Option<PromptDetails>,
    /// LiteLLM in front of Anthropic: `cache_creation_input_tokens` and
    /// `cache_read_input_tokens` beside the OpenAI fields (litellm/llms/anthropic/chat/
    /// transformation.py `calculate_usage`).
    pub(crate) cache_creation_input_tokens: Option<u64>,
    pub(crate) cache_read_input_tokens: Option<u64>,
    /// DeepSeek: `prompt_cache_hit_tokens` (api-docs.deepseek.com/guides/kv_cache).
    pub(crate) prompt_cache_hit_tokens: Option<u64>,
    /// Moonshot (Kimi): `cached_tokens` at the top of `usage`.
    pub(crate) cached_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PromptDetails {
    /// Tokens read from the cache (OpenAI, vLLM, llama.cpp, OpenRouter, LiteLLM).
    pub(crate) cached_tokens: Option<u64>,
    /// Tokens written to the cache: OpenRouter's `cache_write_tokens`
    /// (openrouter.ai/docs/use-cases/usage-accounting), LiteLLM's `cache_creation_tokens`.
    pub(crate) cache_write_tokens: Option<u64>,
    pub(crate) cache_creation_tokens: Option<u64>,
}
