//! A provider's opaque reasoning state attached to one assistant message: what some servers
//! require to be sent back on the next request, and refuse the request without.
//!
//! - DeepSeek's thinking mode: `reasoning_content`, required on assistant messages that carry
//!   tool calls (api-docs.deepseek.com/guides/thinking_mode).
//! - Gemini's OpenAI-compatible endpoint: `extra_content.google.thought_signature` on each
//!   tool call, required back on that call (ai.google.dev/gemini-api/docs/thought-signatures).
//! - Anthropic extended thinking: `thinking` blocks with a `signature` and
//!   `redacted_thinking` blocks with `data`, required unchanged before the `tool_use` blocks
//!   of the same turn (docs.anthropic.com, "Extended thinking", "Preserving thinking blocks").
//!
//! - OpenRouter: `reasoning_details` (reasoning.text / .summary / .encrypted items), wanted
//!   back unmodified on the assistant message, above all one with tool calls
//!   (openrouter.ai/docs/guides/best-practices/reasoning-tokens, "Preserving Reasoning
//!   Blocks").
//!
//! cn-run never interprets this state: it keeps it in the session and sends it back.

use serde::{Deserialize, Serialize};

/// The reasoning state of one assistant message. Empty for most models.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reasoning {
    /// Plain reasoning text (`reasoning_content` or `reasoning` deltas).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The field the text came in, and goes back in: `reasoning_content` (DeepSeek, Qwen,
    /// llama.cpp, vLLM) or `reasoning` (OpenRouter, Ollama); empty means `reasoning_content`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
    /// Anthropic thinking blocks, in the order the model produced them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ThinkingBlock>,
    /// Opaque per-call data (Gemini's `extra_content`), by tool-call id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_extra: Vec<CallExtra>,
    /// OpenRouter's `reasoning_details`, the streamed pieces joined by their `index`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<serde_json::Value>,
}

impl Reasoning {
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.blocks.is_empty()
            && self.call_extra.is_empty()
            && self.details.is_empty()
    }

    /// The opaque data the server attached to the call `id`, if any.
    pub fn extra_for(&self, id: &str) -> Option<&serde_json::Value> {
        self.call_extra
            .iter()
            .find(|e| e.call_id == id)
            .map(|e| &e.extra)
    }
}

/// One Anthropic thinking block, kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    Thinking { thinking: String, signature: String },
    RedactedThinking { data: String },
}

/// Data a server attached to one tool call and wants back on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallExtra {
    pub call_id: String,
    pub extra: serde_json::Value,
}
