//! Unit tests for the OpenAI wire conversion: the request body (order of turns, closing and
//! strict order), stream chunks, stop words and usage wherever servers put it.

use crate::conversation::{Message, ToolCall};

/// An assistant turn calling `Read` as `c1` with `arguments`, and its result.
fn call_and_result(arguments: &str) -> Vec<Message> {
    vec![
        Message::assistant(
            "",
            vec![ToolCall {
                id: "c1".into(),
                name: "Read".into(),
                arguments: arguments.into(),
            }],
        ),
        Message::Tool {
            tool_call_id: "c1".into(),
            name: "Read".into(),
            content: "text".into(),
            is_error: false,
            images: Vec::new(),
        },
    ]
}

mod body {
    use serde_json::json;

    use super::super::{chunk_events, request};
    use crate::provider::model_params::OpenAiParams;

    const ALL: OpenAiParams = OpenAiParams {
        max_completion_tokens: false,
        sampling: true,
        stream_options: true,
        strict_order: false,
    };
    use crate::conversation::{Message, ToolSpec};
    use crate::provider::{ChatRequest, FinishReason, StreamEvent};

    #[test]
    fn the_body_has_system_first_and_tool_results_after_their_calls() {
        let req = ChatRequest {
            model: "m".into(),
            system: "be brief".into(),
            messages: [
                vec![Message::user("hi")],
                super::call_and_result("{\"filepath\":\"a\"}"),
                vec![Message::assistant("", vec![])],
            ]
            .concat()
            .into(),
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: Some(100),
            temperature: Some(0.2),
        };
        let body = serde_json::to_value(request(&req, "gpt", ALL)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "Read", "arguments": "{\"filepath\":\"a\"}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "text"},
                    {"role": "assistant", "content": ""},
                    // A request never ends with the assistant's answer (turn_order.rs).
                    {"role": "user", "content": "continue"}
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [{"type": "function",
                           "function": {"name": "Read", "description": "reads",
                                        "parameters": {"type": "object"}}}],
                "max_tokens": 100,
                "temperature": 0.2
            })
        );
    }

    #[test]
    fn a_chunk_without_index_or_with_object_arguments_still_decodes() {
        let chunk = serde_json::from_value(json!({
            "choices": [{"delta": {"content": null, "tool_calls": [
                {"id": "a", "function": {"name": "Bash", "arguments": {"command": "ls"}}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": null
        }))
        .unwrap();
        let mut out = Vec::new();
        assert!(chunk_events(chunk, &mut out));
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCallDelta {
                    index: None,
                    id: Some("a".into()),
                    name: Some("Bash".into()),
                    arguments: "{\"command\":\"ls\"}".into(),
                    extra: None,
                },
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }
}

mod variants {
    use serde_json::json;

    use super::super::{chunk_events, finish_reason};
    use crate::provider::{FinishReason, StreamEvent};

    fn events(chunk: serde_json::Value) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        chunk_events(serde_json::from_value(chunk).unwrap(), &mut out);
        out
    }

    #[test]
    fn stop_words_of_compatible_servers_map_to_the_same_outcomes() {
        for word in ["length", "max_tokens", "MAX_TOKENS"] {
            assert_eq!(finish_reason(word), FinishReason::Length, "{word}");
        }
        for word in ["content_filter", "refusal", "SAFETY", "recitation"] {
            assert_eq!(finish_reason(word).as_str(), "content_filter", "{word}");
        }
        for word in ["stop", "eos", "end_turn"] {
            assert_eq!(finish_reason(word), FinishReason::Stop, "{word}");
        }
        assert_eq!(finish_reason("pause_turn"), FinishReason::Pause);
        assert_eq!(
            finish_reason("model_length").as_str(),
            "model_context_window_exceeded"
        );
    }

    #[test]
    fn reasoning_under_both_names_is_taken_once_and_before_the_text() {
        let out = events(json!({"choices": [{"delta": {
            "reasoning_content": "think", "reasoning": "think", "content": "answer"}}]}));
        assert_eq!(
            out,
            vec![
                StreamEvent::ReasoningDelta {
                    text: "think".into(),
                    field: "reasoning_content"
                },
                StreamEvent::TextDelta("answer".into())
            ]
        );
    }

    #[test]
    fn usage_is_read_from_the_chunk_the_choice_or_x_groq() {
        let usage_of = |chunk| {
            events(chunk).into_iter().find_map(|e| match e {
                StreamEvent::Usage(u) => Some((u.input_tokens, u.output_tokens)),
                _ => None,
            })
        };
        let u = json!({"prompt_tokens": 7, "completion_tokens": 3});
        assert_eq!(usage_of(json!({"choices": [], "usage": u})), Some((7, 3)));
        assert_eq!(
            usage_of(json!({"choices": [{"delta": {}, "finish_reason": "stop", "usage": u}]})),
            Some((7, 3))
        );
        assert_eq!(
            usage_of(json!({"choices": [{"delta": {}}], "x_groq": {"id": "r", "usage": u}})),
            Some((7, 3))
        );
        assert_eq!(
            usage_of(json!({"choices": [{"delta": {}}], "usage": null})),
            None
        );
    }
}

mod order {
    use serde_json::{Value, json};

    use super::super::request;
    use crate::conversation::Message;
    use crate::provider::ChatRequest;
    use crate::provider::model_params::OpenAiParams;

    fn roles(history: Vec<Message>, strict: bool) -> Vec<Value> {
        let params = OpenAiParams {
            max_completion_tokens: false,
            sampling: true,
            stream_options: false,
            strict_order: strict,
        };
        let req = ChatRequest {
            model: "m".into(),
            system: String::new(),
            messages: history.into(),
            tools: vec![],
            max_tokens: None,
            temperature: None,
        };
        let body = serde_json::to_value(request(&req, "m", params)).unwrap();
        body["messages"].as_array().unwrap().clone()
    }

    /// Mistral's validator (before April 2026) refuses a user turn right after tool
    /// results and a last assistant turn; the strict order puts an assistant turn between
    /// and joins consecutive user turns.
    #[test]
    fn the_strict_order_bridges_tool_results_and_joins_user_turns() {
        let mut history = vec![Message::user("task"), Message::user("more")];
        history.extend(super::call_and_result("{}"));
        history.push(Message::user("checks failed"));
        let strict = roles(history.clone(), true);
        let kinds: Vec<&str> = strict.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["user", "assistant", "tool", "assistant", "user"]);
        assert_eq!(strict[0]["content"], "task\n\nmore");
        assert_eq!(
            strict[3],
            json!({"role": "assistant", "content": "(tool results received)"})
        );
        // Other servers get the turns as they are.
        let plain = roles(history, false);
        assert_eq!(plain.len(), 5);
        assert_eq!(plain[4]["role"], "user");
    }

    #[test]
    fn a_history_ending_with_the_answer_is_closed_by_a_user_turn_in_both_orders() {
        for strict in [false, true] {
            let messages = roles(
                vec![Message::user("task"), Message::assistant("summary", vec![])],
                strict,
            );
            assert_eq!(
                messages.last().unwrap(),
                &json!({"role": "user", "content": "continue"})
            );
        }
    }
}

mod usage {
    use serde_json::json;

    use super::super::chunk_events;
    use crate::conversation::Usage;
    use crate::provider::StreamEvent;

    fn usage_of(usage: serde_json::Value) -> Usage {
        let mut out = Vec::new();
        let mut chunk = json!({"choices": []});
        chunk["usage"] = usage;
        chunk_events(serde_json::from_value(chunk).unwrap(), &mut out);
        match out.pop() {
            Some(StreamEvent::Usage(u)) => u,
            other => panic!("{other:?}"),
        }
    }

    fn usage(input: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: 7,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn cache_reads_and_writes_wherever_a_gateway_puts_them() {
        // OpenRouter: prompt_tokens_details.cache_write_tokens.
        let openrouter = json!({"prompt_tokens": 3400, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 1800, "cache_write_tokens": 1500}});
        assert_eq!(usage_of(openrouter), usage(3400, 1800, 1500));
        // LiteLLM now: the Anthropic names beside the OpenAI ones, writes counted in.
        let litellm = json!({"prompt_tokens": 3400, "completion_tokens": 7,
            "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 1800,
            "prompt_tokens_details": {"cached_tokens": 1800, "cache_creation_tokens": 1500}});
        assert_eq!(usage_of(litellm), usage(3400, 1800, 1500));
        // LiteLLM before it counted writes in prompt_tokens (input + reads only).
        let older = json!({"prompt_tokens": 1900, "completion_tokens": 7,
            "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 1800,
            "prompt_tokens_details": {"cached_tokens": 1800}});
        assert_eq!(usage_of(older), usage(3400, 1800, 1500));
        // DeepSeek and Moonshot name the reads their own way.
        let deepseek = json!({"prompt_tokens": 900, "completion_tokens": 7,
            "prompt_cache_hit_tokens": 600, "prompt_cache_miss_tokens": 300});
        assert_eq!(usage_of(deepseek), usage(900, 600, 0));
        let moonshot = json!({"prompt_tokens": 900, "completion_tokens": 7, "cached_tokens": 512});
        assert_eq!(usage_of(moonshot), usage(900, 512, 0));
    }
}
