//! Translation between cn-run's provider-neutral types and the OpenAI wire format: the
//! conversation into a request body, stream chunks into [`StreamEvent`]s.

use serde_json::Value;

use super::wire;
use crate::conversation::{Message, Usage};
use crate::provider::model_params::OpenAiParams;
use crate::provider::turn_order;
use crate::provider::{ChatRequest, FinishReason, StreamEvent};

/// The request body for `request`, sent as `model`, with the parameters `params` allows.
pub(crate) fn request<'a>(
    request: &'a ChatRequest<'_>,
    model: &'a str,
    params: OpenAiParams,
) -> wire::Request<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(wire::Message::System {
            content: &request.system,
        });
    }
    let vision = super::images::takes_images(model);
    let mut results: Vec<&Message> = Vec::new();
    for m in request.messages.iter() {
        if matches!(m, Message::Tool { .. }) {
            results.push(m);
        } else if !results.is_empty() {
            messages.extend(super::images::after_results(&results).filter(|_| vision));
            results.clear();
        }
        messages.push(message(m, vision));
    }
    messages.extend(super::images::after_results(&results).filter(|_| vision));
    if turn_order::ends_with_answer(&request.messages) {
        messages.push(wire::Message::User {
            content: turn_order::CLOSING_TURN.into(),
        });
    }
    if params.strict_order {
        messages = strict_order(messages);
    }
    let tools = request
        .tools
        .iter()
        .map(|tool| wire::Tool {
            kind: "function",
            function: wire::Function {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        })
        .collect();
    let (max_tokens, max_completion_tokens) = if params.max_completion_tokens {
        (None, request.max_tokens)
    } else {
        (request.max_tokens, None)
    };
    wire::Request {
        model,
        messages,
        stream: true,
        stream_options: params.stream_options.then_some(wire::StreamOptions {
            include_usage: true,
        }),
        tools,
        max_tokens,
        max_completion_tokens,
        // f32 → f64 through its shortest decimal, so 0.2 is sent as 0.2, not 0.2000000029.
        temperature: request
            .temperature
            .filter(|_| params.sampling)
            .map(|t| t.to_string().parse().unwrap_or(f64::from(t))),
    }
}

/// The messages in the order strict validators accept (Mistral's, see
/// [`turn_order`]): an assistant turn between tool results and a user turn, consecutive
/// plain user turns joined into one.
fn strict_order(messages: Vec<wire::Message<'_>>) -> Vec<wire::Message<'_>> {
    let mut out: Vec<wire::Message<'_>> = Vec::with_capacity(messages.len());
    for message in messages {
        let user = matches!(
            message,
            wire::Message::User { .. } | wire::Message::UserParts { .. }
        );
        match (out.last_mut(), message) {
            (Some(wire::Message::User { content: last }), wire::Message::User { content }) => {
                let joined = format!("{last}\n\n{content}");
                *last = joined.into();
            }
            (Some(wire::Message::Tool { .. }), message) if user => {
                out.push(wire::Message::Assistant {
                    content: Some(turn_order::BRIDGE_TURN),
                    reasoning_content: None,
                    reasoning: None,
                    reasoning_details: &[],
                    tool_calls: Vec::new(),
                });
                out.push(message);
            }
            (_, message) => out.push(message),
        }
    }
    out
}

fn message(message: &Message, vision: bool) -> wire::Message<'_> {
    match message {
        Message::User { content } => wire::Message::User {
            content: content.as_str().into(),
        },
        Message::Assistant {
            content,
            tool_calls,
            reasoning,
            ..
        } => wire::Message::Assistant {
            content: (!content.is_empty() || tool_calls.is_empty()).then_some(content.as_str()),
            // Only where DeepSeek requires it (older reasoners refuse it anywhere else), and
            // under the name the server used.
            reasoning_content: sent_back(tool_calls, reasoning, "reasoning_content"),
            // OpenRouter wants its structured details back instead of the text.
            reasoning: sent_back(tool_calls, reasoning, "reasoning")
                .filter(|_| reasoning.details.is_empty()),
            reasoning_details: &reasoning.details,
            tool_calls: tool_calls
                .iter()
                .map(|call| wire::ToolCall {
                    id: &call.id,
                    kind: "function",
                    function: wire::FunctionCall {
                        name: &call.name,
                        arguments: &call.arguments,
                    },
                    extra_content: reasoning.extra_for(&call.id),
                })
                .collect(),
        },
        Message::Tool {
            tool_call_id,
            content,
            images,
            ..
        } => wire::Message::Tool {
            tool_call_id,
            content: super::images::tool_text(content, images, vision),
        },
    }
}

/// The reasoning text of a message with tool calls, if it came in `field`.
fn sent_back<'a>(
    tool_calls: &[crate::conversation::ToolCall],
    reasoning: &'a crate::conversation::Reasoning,
    field: &str,
) -> Option<&'a str> {
    let came_in = if reasoning.field.is_empty() {
        "reasoning_content"
    } else {
        reasoning.field.as_str()
    };
    (!tool_calls.is_empty() && !reasoning.text.is_empty() && came_in == field)
        .then_some(reasoning.text.as_str())
}

/// The events in one chunk (or a whole completion). Returns whether it carried a finish
/// reason. Usage is read wherever the server put it: the chunk, the choice, or Groq's
/// `x_groq`.
pub(crate) fn chunk_events(chunk: wire::Chunk, out: &mut Vec<StreamEvent>) -> bool {
    let mut finished = false;
    let mut usage = chunk.usage.or(chunk.x_groq.and_then(|x| x.usage));
    if let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) {
        if let Some(delta) = choice.delta.or(choice.message) {
            delta_events(delta, out);
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            let finish = match finish_reason(&reason) {
                FinishReason::ContentFilter(word) => FinishReason::ContentFilter(
                    filtered(choice.content_filter_results.as_ref())
                        .map_or(word.clone(), |which| format!("{word}: {which}")),
                ),
                other => other,
            };
            out.push(StreamEvent::Finish(finish));
            finished = true;
        }
        usage = usage.or(choice.usage);
    }
    if let Some(usage) = usage {
        out.push(StreamEvent::Usage(usage_of(usage)));
    }
    finished
}

/// The categories Azure's `content_filter_results` marks filtered, joined.
fn filtered(results: Option<&Value>) -> Option<String> {
    let names: Vec<&str> = results?
        .as_object()?
        .iter()
        .filter(|(_, v)| v.get("filtered").and_then(Value::as_bool) == Some(true))
        .map(|(name, _)| name.as_str())
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// cn-run's usage from a server's or a gateway's: the cache's reads and writes wherever they
/// are put (`wire::Usage`), so cache writes are priced at their premium. `prompt_tokens` is
/// the whole prompt (OpenAI's convention); where it leaves the writes out (LiteLLM before
/// it counted them in), they are added.
fn usage_of(usage: wire::Usage) -> Usage {
    let details = usage.prompt_tokens_details.unwrap_or_default();
    let read = details
        .cached_tokens
        .or(usage.cache_read_input_tokens)
        .or(usage.prompt_cache_hit_tokens)
        .or(usage.cached_tokens)
        .unwrap_or(0);
    let write = details
        .cache_write_tokens
        .or(details.cache_creation_tokens)
        .or(usage.cache_creation_input_tokens)
        .unwrap_or(0);
    let prompt = usage.prompt_tokens.unwrap_or(0);
    let input = if prompt < read + write {
        prompt + write
    } else {
        prompt
    };
    Usage {
        input_tokens: input,
        output_tokens: usage.completion_tokens.unwrap_or(0),
        cache_read_tokens: read,
        cache_write_tokens: write,
    }
}

/// Reasoning first, then text, then tool calls: the order a model produces them.
fn delta_events(delta: wire::Delta, out: &mut Vec<StreamEvent>) {
    // Some servers send the same text under both names: one is enough.
    let reasoning = (delta.reasoning_content.filter(|r| !r.is_empty()))
        .map(|text| (text, "reasoning_content"))
        .or(delta
            .reasoning
            .filter(|r| !r.is_empty())
            .map(|text| (text, "reasoning")));
    if let Some((text, field)) = reasoning {
        out.push(StreamEvent::ReasoningDelta { text, field });
    }
    out.extend(
        delta
            .reasoning_details
            .into_iter()
            .flatten()
            .map(StreamEvent::ReasoningDetail),
    );
    match delta.content {
        Some(Value::String(text)) if !text.is_empty() => out.push(StreamEvent::TextDelta(text)),
        Some(Value::Array(parts)) => content_parts(&parts, out),
        _ => {}
    }
    for call in delta.tool_calls.unwrap_or_default() {
        let function = call.function.unwrap_or_default();
        let arguments = match function.arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
        };
        out.push(StreamEvent::ToolCallDelta {
            index: call.index,
            id: call.id,
            name: function.name,
            arguments,
            extra: call.extra_content.filter(|e| !e.is_null()),
        });
    }
}

/// Content as an array of parts (Mistral's reasoning models): `text` parts are the answer,
/// `thinking` parts (themselves text parts) are reasoning, not kept.
fn content_parts(parts: &[Value], out: &mut Vec<StreamEvent>) {
    for part in parts {
        let text = |v: &Value| v.get("text").and_then(Value::as_str).map(str::to_owned);
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = text(part).filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta(t));
                }
            }
            Some("thinking") => {
                let inner = part.get("thinking").and_then(Value::as_array);
                // Mistral takes no reasoning field back (its validator forbids extra
                // fields): the thinking is only a sign of life.
                if inner.is_some_and(|parts| !parts.is_empty()) {
                    out.push(StreamEvent::KeepAlive);
                }
            }
            _ => {}
        }
    }
}

/// OpenAI's `finish_reason` in our terms; compatible servers' own words
/// (`stop_words.rs`) included.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    crate::provider::stop_words::finish_reason(reason)
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
