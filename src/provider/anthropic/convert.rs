//! Translation between cn-run's conversation and the Anthropic Messages format.
//!
//! Anthropic wants strictly alternating roles, tool results as blocks of a user message
//! right after the assistant message that asked for them, and `cache_control` markers where
//! a cacheable prefix ends. This module produces that from the flat history, and maps the
//! stream's usage and stop reasons back.

use serde_json::Value;

use super::wire::{self, Block, EPHEMERAL};
use crate::conversation::{ImagePart, Message, ThinkingBlock, Usage};
use crate::provider::model_params;
use crate::provider::turn_order;
use crate::provider::{ChatRequest, FinishReason};

/// Sent as the first user message when the history starts with the assistant (after a
/// compaction), because the API expects a user turn first.
const OPENING: &str = "Continue from where the conversation left off.";

/// How one client shapes its requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Extended thinking with this budget (`thinking: {type: enabled, budget_tokens}`).
    pub(crate) thinking: Option<u32>,
    /// A ceiling the server named in an earlier refusal of `max_tokens`.
    pub(crate) ceiling: Option<u32>,
}

/// The request body for `request`, sent as `model`.
///
/// With thinking on, Anthropic's rules for thinking with tools apply: no `temperature`
/// (only the default is accepted), `max_tokens` above the budget, and each earlier thinking
/// block sent back unchanged before the tool calls of its turn.
pub(crate) fn request<'a>(
    request: &'a ChatRequest<'_>,
    model: &'a str,
    shape: Shape,
) -> wire::Request<'a> {
    let system = if request.system.is_empty() {
        Vec::new()
    } else {
        vec![Block::Text {
            text: &request.system,
            cache_control: Some(EPHEMERAL),
        }]
    };
    let mut tools: Vec<wire::Tool<'a>> = request
        .tools
        .iter()
        .map(|tool| wire::Tool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.parameters,
            cache_control: None,
        })
        .collect();
    if let Some(last) = tools.last_mut() {
        last.cache_control = Some(EPHEMERAL);
    }
    let max_tokens = model_params::anthropic_max_tokens(model, request.max_tokens, shape.thinking);
    let max_tokens = shape.ceiling.map_or(max_tokens, |c| max_tokens.min(c));
    wire::Request {
        model,
        max_tokens,
        system,
        messages: messages(&request.messages),
        tools,
        stream: true,
        // f32 → f64 through its shortest decimal, so 0.2 is sent as 0.2, not 0.2000000029.
        temperature: request
            .temperature
            .filter(|_| shape.thinking.is_none())
            .map(|t| t.to_string().parse().unwrap_or(f64::from(t))),
        thinking: shape.thinking.map(|budget_tokens| wire::ThinkingConfig {
            kind: "enabled",
            budget_tokens,
        }),
    }
}

/// The history as alternating user/assistant messages; the last block carries a cache
/// marker so each turn of a long run reads the previous turns from the cache.
///
/// Thinking blocks go back unchanged, first in their message, whenever the server produced
/// them: with tools, the latest assistant turn must carry its thinking (also for models that
/// think without being asked), and the API accepts those of earlier turns.
pub(crate) fn messages(history: &[Message]) -> Vec<wire::Message<'_>> {
    let mut out: Vec<wire::Message<'_>> = Vec::with_capacity(history.len());
    for message in history {
        let (role, blocks) = blocks(message);
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(wire::Message {
                role,
                content: blocks,
            }),
        }
    }
    if out.first().is_some_and(|m| m.role == "assistant") {
        out.insert(
            0,
            wire::Message {
                role: "user",
                content: vec![Block::Text {
                    text: OPENING,
                    cache_control: None,
                }],
            },
        );
    }
    if out.last().is_some_and(|m| m.role == "assistant") {
        // A request must end with the user: Opus 4.6+ refuses a prefill (turn_order.rs).
        out.push(wire::Message {
            role: "user",
            content: vec![Block::Text {
                text: turn_order::CLOSING_TURN,
                cache_control: None,
            }],
        });
    }
    if let Some(block) = out.last_mut().and_then(|m| m.content.last_mut()) {
        block.set_cache_control();
    }
    out
}

fn blocks(message: &Message) -> (&'static str, Vec<Block<'_>>) {
    match message {
        Message::User { content } => ("user", text_block(content).into_iter().collect()),
        Message::Assistant {
            content,
            tool_calls,
            reasoning,
            ..
        } => {
            let mut blocks: Vec<Block<'_>> = reasoning.blocks.iter().map(thinking_block).collect();
            blocks.extend(text_block(content));
            blocks.extend(tool_calls.iter().map(|call| Block::ToolUse {
                id: &call.id,
                name: &call.name,
                input: tool_input(&call.arguments),
                cache_control: None,
            }));
            ("assistant", blocks)
        }
        Message::Tool {
            tool_call_id,
            content,
            is_error,
            images,
            ..
        } => (
            "user",
            vec![Block::ToolResult {
                tool_use_id: tool_call_id,
                content: result_content(content, images),
                is_error: *is_error,
                cache_control: None,
            }],
        ),
    }
}

/// A tool result's text, with its images (an MCP server's) as image blocks after it: every
/// Claude model since Claude 3 takes images inside a tool result.
fn result_content<'a>(text: &'a str, images: &'a [ImagePart]) -> wire::ResultContent<'a> {
    if images.is_empty() {
        return wire::ResultContent::Text(text);
    }
    let text = (!text.trim().is_empty()).then_some(wire::ResultPart::Text { text });
    // In an untrusted run each image sits between its marker's tags, like the text.
    let images = images.iter().flat_map(|image| {
        let open = image
            .marker
            .as_ref()
            .map(|m| wire::ResultPart::Text { text: &m.open });
        let close = image
            .marker
            .as_ref()
            .map(|m| wire::ResultPart::Text { text: &m.close });
        let part = wire::ResultPart::Image {
            source: wire::ImageSource {
                kind: "base64",
                media_type: &image.mime_type,
                data: &image.data,
            },
        };
        open.into_iter().chain([part]).chain(close)
    });
    wire::ResultContent::Parts(text.into_iter().chain(images).collect())
}

fn thinking_block(block: &ThinkingBlock) -> Block<'_> {
    match block {
        ThinkingBlock::Thinking {
            thinking,
            signature,
        } => Block::Thinking {
            thinking,
            signature,
        },
        ThinkingBlock::RedactedThinking { data } => Block::RedactedThinking { data },
    }
}

/// The API rejects empty text blocks, so empty text is left out.
fn text_block(text: &str) -> Option<Block<'_>> {
    (!text.trim().is_empty()).then_some(Block::Text {
        text,
        cache_control: None,
    })
}

/// `tool_use.input` must be an object. Arguments the model sent malformed were already
/// reported back to it as a tool error; the history keeps an empty object in their place.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// Anthropic's `stop_reason` in our terms (`stop_words.rs`).
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    crate::provider::stop_words::finish_reason(reason)
}

/// Running token counts of one response.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct UsageTally {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

impl UsageTally {
    /// Takes every count the event carries (later events repeat or extend earlier ones).
    pub(crate) fn update(&mut self, usage: &wire::Usage) {
        let set = |slot: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *slot = value;
            }
        };
        set(&mut self.input, usage.input_tokens);
        set(&mut self.output, usage.output_tokens);
        set(&mut self.cache_read, usage.cache_read_input_tokens);
        set(&mut self.cache_write, usage.cache_creation_input_tokens);
    }

    /// In cn-run's convention `input_tokens` is the whole prompt, cached parts included
    /// (as OpenAI counts it); Anthropic counts cache reads and writes separately.
    pub(crate) fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
        }
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
