//! The conversation as cn-run keeps it: provider-neutral messages, tool calls and usage.
//!
//! Providers translate these to and from their wire formats; the session file stores them
//! as they are. The system message is not part of the history: it is rebuilt every turn.

mod image;
mod reasoning;
mod usage_wire;

pub use image::{ImageMarker, ImagePart, human_size};
pub use reasoning::{CallExtra, Reasoning, ThinkingBlock};

use serde::{Deserialize, Serialize};

/// One tool call requested by the model. `arguments` is the raw JSON text the model sent,
/// kept verbatim so a malformed argument string can be reported back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        content: String,
    },
    Assistant {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Set on the message that replaced older history after a compaction.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        summary: bool,
        /// The provider's reasoning state, sent back where the provider requires it.
        #[serde(default, skip_serializing_if = "Reasoning::is_empty")]
        reasoning: Reasoning,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// Images the tool returned beside its text (an MCP server's image content).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls,
            summary: false,
            reasoning: Reasoning::default(),
        }
    }

    /// An assistant message with the reasoning state its response carried.
    pub fn assistant_with(
        content: impl Into<String>,
        tool_calls: Vec<ToolCall>,
        reasoning: Reasoning,
    ) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls,
            summary: false,
            reasoning,
        }
    }

    /// The text of the message, whatever its role.
    pub fn text(&self) -> &str {
        match self {
            Message::User { content }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => content,
        }
    }
}

/// Token usage as reported by the provider for one request (or summed over a run).
/// `input_tokens` is the whole prompt here; written as `claude -p` writes it (usage_wire.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "usage_wire::UsageWire", into = "usage_wire::UsageWire")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// A tool as offered to the model: name, description and a JSON schema of its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Tool results come as each call finishes (in the session log, and after a resume that
/// answers the calls a killed process left); the history keeps them in the order of the
/// calls. Each run of results after an assistant message is put back in that order.
pub fn order_tool_results(history: &mut [Message]) {
    let mut i = 0;
    while i < history.len() {
        let Message::Assistant { tool_calls, .. } = &history[i] else {
            i += 1;
            continue;
        };
        let order: Vec<String> = tool_calls.iter().map(|c| c.id.clone()).collect();
        let end = history[i + 1..]
            .iter()
            .position(|m| !matches!(m, Message::Tool { .. }))
            .map_or(history.len(), |p| i + 1 + p);
        history[i + 1..end].sort_by_key(|m| match m {
            Message::Tool { tool_call_id, .. } => order
                .iter()
                .position(|id| id == tool_call_id)
                .unwrap_or(usize::MAX),
            _ => usize::MAX,
        });
        i = end.max(i + 1);
    }
}
