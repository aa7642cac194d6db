//! Builders for the exact SSE bytes the providers send, so tests read like the stream they
//! stand for: `openai::text("Hi")`, `anthropic::input_json_delta(1, "{\"a\"")`, …
//!
//! Each function returns one complete event (`data: …\n\n`, or `event: …\ndata: …\n\n`)
//! as a `String`; [`super::http::Reply::sse`] sends each as one HTTP chunk.

use serde_json::{Value, json};

/// `data: <json>\n\n`.
pub fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// The OpenAI chat-completions stream.
pub mod openai {
    use super::{Value, data, json};

    fn chunk(delta: &Value, finish: Option<&str>) -> String {
        data(&json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        }))
    }

    /// The first chunk most servers send: the role and empty content.
    pub fn role() -> String {
        chunk(&json!({"role": "assistant", "content": ""}), None)
    }

    pub fn text(text: &str) -> String {
        chunk(&json!({"content": text}), None)
    }

    /// A tool call: a chunk with id and name, then one chunk per argument piece.
    pub fn tool_call(index: usize, id: &str, name: &str, args_in_pieces: &[&str]) -> Vec<String> {
        let mut out = vec![chunk(
            &json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        )];
        out.extend(args_in_pieces.iter().map(|piece| tool_args(index, piece)));
        out
    }

    /// One more piece of the arguments of the call at `index`.
    pub fn tool_args(index: usize, piece: &str) -> String {
        chunk(
            &json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
            None,
        )
    }

    pub fn finish(reason: &str) -> String {
        chunk(&json!({}), Some(reason))
    }

    /// The usage chunk sent last when `stream_options.include_usage` is set.
    pub fn usage(prompt: u64, completion: u64, cached: u64) -> String {
        data(&json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "test-model",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached}
            }
        }))
    }

    pub fn done() -> String {
        "data: [DONE]\n\n".to_string()
    }

    /// An error object inside the stream.
    pub fn error(kind: &str, message: &str) -> String {
        data(&json!({"error": {"message": message, "type": kind, "code": kind}}))
    }

    /// A whole plain answer: role, text, finish, usage, done.
    pub fn answer(text: &str) -> Vec<String> {
        vec![
            role(),
            self::text(text),
            finish("stop"),
            usage(10, 5, 0),
            done(),
        ]
    }
}

/// The Anthropic Messages stream.
pub mod anthropic {
    use super::{Value, json};

    fn event(name: &str, data: &Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    pub fn message_start(input: u64, cache_read: u64, cache_write: u64) -> String {
        event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": "msg_test", "type": "message", "role": "assistant", "content": [],
                "model": "claude-test", "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input, "output_tokens": 1,
                          "cache_read_input_tokens": cache_read,
                          "cache_creation_input_tokens": cache_write}}}),
        )
    }

    pub fn content_block_start_text(index: usize) -> String {
        event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
        )
    }

    pub fn text_delta(index: usize, text: &str) -> String {
        event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": text}}),
        )
    }

    pub fn tool_use_start(index: usize, id: &str, name: &str) -> String {
        event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        )
    }

    pub fn input_json_delta(index: usize, partial: &str) -> String {
        event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": partial}}),
        )
    }

    pub fn content_block_stop(index: usize) -> String {
        event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    }

    pub fn message_delta(stop_reason: &str, output_tokens: u64) -> String {
        event(
            "message_delta",
            &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                    "usage": {"output_tokens": output_tokens}}),
        )
    }

    pub fn message_stop() -> String {
        event("message_stop", &json!({"type": "message_stop"}))
    }

    pub fn ping() -> String {
        event("ping", &json!({"type": "ping"}))
    }

    /// An `error` event; `kind` is the error type without the `_error` suffix
    /// (`overloaded`, `rate_limit`, `api`, …).
    pub fn error(kind: &str) -> String {
        event(
            "error",
            &json!({"type": "error",
                    "error": {"type": format!("{kind}_error"), "message": format!("{kind} (test)")}}),
        )
    }

    /// A whole plain answer in one text block.
    pub fn answer(text: &str) -> Vec<String> {
        vec![
            message_start(20, 0, 0),
            content_block_start_text(0),
            text_delta(0, text),
            content_block_stop(0),
            message_delta("end_turn", 3),
            message_stop(),
        ]
    }
}
