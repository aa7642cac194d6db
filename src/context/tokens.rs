//! Token counts of a request (system prompt, history, tool list), kept cheap enough to run
//! before every model call of a 200-turn run.
//!
//! Why it exists: compaction must start before the provider rejects a request, so the
//! runner needs its own count of what it is about to send. Three decisions shape it:
//!
//! - **Which tokenizer.** OpenAI models use their published BPE (`o200k_base` for gpt-4o,
//!   gpt-4.1, gpt-5, gpt-oss and the o-series; `cl100k_base` for gpt-4 and gpt-3.5). Other
//!   families (Claude, Gemini, Mistral, local models) have no tokenizer we can run, so they
//!   get [`Encoding::Estimate`]: the o200k count times a per-family factor (Claude 1.23,
//!   Gemini 1.18, Mistral 1.26, others 1.0) — the factors Continue's `cn` applies. We chose
//!   "o200k × factor" over a plain bytes heuristic because it follows the kind of text (code,
//!   prose, CJK) the way a real BPE does, and it matches the behaviour users know from `cn`.
//!   The provider's reported usage remains the truth; a context-length error is the backstop.
//! - **Cheap first.** Building an encoder costs 0.1–0.3 s and ~50 MB, so a run starts on
//!   [`estimate`], a one-pass scan that over-counts ordinary text (code, prose, JSON, diffs,
//!   CJK: 1.4–1.9× the o200k count on our samples, never below 1.0×) and under-counts only
//!   unusual text (random base64, rare ideographs: down to 0.72×). Once the estimated request
//!   reaches 60 % of the compaction threshold, the encoder is built on a background thread,
//!   which also counts the history seen so far; from then on counts are exact. A total at or
//!   above the threshold is never left to the estimate: the counter waits for the encoder.
//! - **Incremental.** The per-message counts are cached, keyed by position and a fingerprint
//!   (length + hash) of the message. The history is append-only between compactions, so each
//!   call tokenises only the new messages; a changed first or last cached message (compaction,
//!   pruning) is detected and only the changed part is recounted. An in-place edit of a
//!   middle message is not: call [`TokenCounter::forget_history`] after one.
//!
//! Per-item overheads follow `cn`: message text + 2, + 3 per history item, tool call =
//! name + 10 + arguments, tool result + 5, system prompt + 4, tool list 12 + Σ tools + 12.
//! Images a tool returned count by their pixels (`image_tokens.rs`).

#[path = "tokens_counter.rs"]
mod counter;
#[path = "tokens_estimate.rs"]
mod estimate;
#[path = "image_tokens.rs"]
mod image;

pub use counter::TokenCounter;
pub use estimate::estimate;
pub use image::{MAX_TOKENS as MAX_IMAGE_TOKENS, image_tokens};

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::conversation::{Message, ToolSpec};

/// Added to every message's text (`cn`: content + 2).
const MESSAGE_OVERHEAD: u64 = 2;
/// Added per history item when the history is summed (`cn`: + 3 · items).
const ITEM_OVERHEAD: u64 = 3;
/// Added per tool call on top of its name and arguments.
const TOOL_CALL_OVERHEAD: u64 = 10;
/// Added to a tool result message.
const TOOL_RESULT_OVERHEAD: u64 = 5;
/// Added to the system prompt.
const SYSTEM_OVERHEAD: u64 = 4;
/// Added before and after the tool list.
const TOOL_LIST_OVERHEAD: u64 = 12;

/// The tokenizer a model's text is counted with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// OpenAI `o200k_base`: gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss, o1/o3/o4.
    O200k,
    /// OpenAI `cl100k_base`: gpt-4, gpt-3.5.
    Cl100k,
    /// No published tokenizer: `o200k_base` times the family factor (see the module header).
    Estimate,
}

/// The encoding for a model name, with or without a provider prefix (`openai/gpt-4o`).
pub fn encoding_for(model: &str) -> Encoding {
    let name = base_name(model);
    let o200k = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "gpt-oss",
        "chatgpt-4o",
    ];
    if o200k.iter().any(|p| name.starts_with(p)) || is_o_series(&name) {
        Encoding::O200k
    } else if ["gpt-4", "gpt-3.5", "gpt-35"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        Encoding::Cl100k
    } else {
        Encoding::Estimate
    }
}

/// The factor applied to o200k counts for models without a published tokenizer.
pub(crate) fn family_factor(model: &str) -> f64 {
    let name = base_name(model);
    if encoding_for(model) != Encoding::Estimate {
        1.0
    } else if name.contains("claude") {
        1.23
    } else if name.contains("gemini") {
        1.18
    } else if name.contains("stral") || name.contains("mixtral") {
        1.26
    } else {
        1.0
    }
}

fn base_name(model: &str) -> String {
    let last = model.rsplit('/').next().unwrap_or(model);
    last.trim().to_ascii_lowercase()
}

/// `o1`, `o3-mini`, `o4-mini-high`…: an `o`, one digit, then the end or a dash.
fn is_o_series(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2
        && b[0] == b'o'
        && matches!(b[1], b'1' | b'3' | b'4')
        && (b.len() == 2 || b[2] == b'-')
}

/// One message's tokens (before the family factor), with `count` giving a text's tokens.
pub(crate) fn message_tokens(message: &Message, count: &impl Fn(&str) -> u64) -> u64 {
    let mut total = count(message.text()) + MESSAGE_OVERHEAD + ITEM_OVERHEAD;
    match message {
        Message::User { .. } => {}
        Message::Assistant {
            tool_calls,
            reasoning,
            ..
        } => {
            for call in tool_calls {
                total += count(&call.name) + TOOL_CALL_OVERHEAD + count(&call.arguments);
            }
            // Reasoning sent back with tool calls takes room in the window too.
            if !tool_calls.is_empty() {
                total += count(&reasoning.text);
                for block in &reasoning.blocks {
                    if let crate::conversation::ThinkingBlock::Thinking { thinking, .. } = block {
                        total += count(thinking);
                    }
                }
            }
        }
        Message::Tool { images, .. } => {
            total += TOOL_RESULT_OVERHEAD + images.iter().map(image_tokens).sum::<u64>();
        }
    }
    total
}

/// The system prompt's tokens (before the family factor); an empty prompt costs nothing.
pub(crate) fn system_tokens(system: &str, count: &impl Fn(&str) -> u64) -> u64 {
    if system.is_empty() {
        0
    } else {
        count(system) + SYSTEM_OVERHEAD
    }
}

/// The tool list's tokens (before the family factor); no tools cost nothing.
///
/// Each tool is counted as the JSON definition sent to the provider (name, description and
/// the whole parameter schema, nested properties included). Providers render tool schemas
/// in their own, usually more compact, form, so this is an upper bound: the window check
/// may compact a little early, but never lets a request overflow because of deep (MCP)
/// schemas. (`cn` counts only names, descriptions and top-level properties.)
pub(crate) fn tools_tokens(tools: &[ToolSpec], count: &impl Fn(&str) -> u64) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    let body: u64 = tools
        .iter()
        .map(|t| {
            let definition = serde_json::json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}});
            count(&definition.to_string())
        })
        .sum();
    2 * TOOL_LIST_OVERHEAD + body
}

/// Identifies a message's content cheaply enough to check on every call: total text length
/// plus a hash of every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    len: usize,
    hash: u64,
}

impl Fingerprint {
    pub(crate) fn of_message(message: &Message) -> Self {
        let mut h = DefaultHasher::new();
        let mut len = message.text().len();
        std::mem::discriminant(message).hash(&mut h);
        message.text().hash(&mut h);
        match message {
            Message::User { .. } => {}
            Message::Assistant {
                tool_calls,
                summary,
                ..
            } => {
                summary.hash(&mut h);
                for call in tool_calls {
                    len += call.name.len() + call.arguments.len();
                    (&call.id, &call.name, &call.arguments).hash(&mut h);
                }
            }
            Message::Tool {
                tool_call_id,
                name,
                is_error,
                images,
                ..
            } => {
                (tool_call_id, name, is_error).hash(&mut h);
                // An image's type, length and ends (hashing megabytes on every call would cost
                // more than the count it guards).
                for image in images {
                    let data = image.data.as_bytes();
                    len += data.len();
                    let ends = (
                        &data[..data.len().min(256)],
                        &data[data.len().saturating_sub(256)..],
                    );
                    (&image.mime_type, ends).hash(&mut h);
                }
            }
        }
        Fingerprint {
            len,
            hash: h.finish(),
        }
    }

    pub(crate) fn of_text(text: &str) -> Self {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        Fingerprint {
            len: text.len(),
            hash: h.finish(),
        }
    }

    pub(crate) fn of_tools(tools: &[ToolSpec]) -> Self {
        let mut h = DefaultHasher::new();
        let mut len = 0;
        for tool in tools {
            len += tool.name.len() + tool.description.len();
            (&tool.name, &tool.description, &tool.parameters).hash(&mut h);
        }
        Fingerprint {
            len,
            hash: h.finish(),
        }
    }
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
