//! Unit tests for the Anthropic request body: roles, merging, tool pairing, cache markers.

use serde_json::json;

use super::{Shape, UsageTally, request};
use crate::conversation::{Message, ToolCall, ToolSpec};
use crate::provider::ChatRequest;
use crate::provider::anthropic::wire;

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn result(id: &str, content: &str, is_error: bool) -> Message {
    Message::Tool {
        tool_call_id: id.into(),
        name: "Read".into(),
        content: content.into(),
        is_error,
        images: Vec::new(),
    }
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object"}),
    }
}

#[test]
fn the_body_pairs_results_with_calls_merges_roles_and_marks_cache_points() {
    let req = ChatRequest {
        model: "m".into(),
        system: "be brief".into(),
        messages: vec![
            Message::user("hi"),
            Message::assistant(
                "Looking.",
                vec![
                    call("t1", "Read", "{\"filepath\":\"a\"}"),
                    call("t2", "List", "not json"),
                ],
            ),
            result("t1", "contents", false),
            result("t2", "bad arguments", true),
            Message::user("and now?"),
        ]
        .into(),
        tools: vec![tool("Read"), tool("List")],
        max_tokens: None,
        temperature: None,
    };
    let body = serde_json::to_value(request(&req, "claude", Shape::default())).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "claude",
            "max_tokens": 8192,
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"filepath": "a"}},
                    {"type": "tool_use", "id": "t2", "name": "List", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "contents"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "bad arguments", "is_error": true},
                    {"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}
                ]}
            ],
            "tools": [
                {"name": "Read", "description": "Read tool", "input_schema": {"type": "object"}},
                {"name": "List", "description": "List tool", "input_schema": {"type": "object"},
                 "cache_control": {"type": "ephemeral"}}
            ],
            "stream": true
        })
    );
}

#[test]
fn a_history_that_starts_with_the_assistant_gets_a_user_turn_first() {
    let history = vec![
        Message::Assistant {
            content: "Summary so far.".into(),
            tool_calls: vec![],
            summary: true,
            reasoning: crate::conversation::Reasoning::default(),
        },
        Message::user("continue"),
    ];
    let body = serde_json::to_value(super::messages(&history)).unwrap();
    let roles: Vec<_> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
}

#[test]
fn cached_tokens_count_as_part_of_the_input() {
    let mut tally = UsageTally::default();
    tally.update(&wire::Usage {
        input_tokens: Some(10),
        output_tokens: Some(1),
        cache_read_input_tokens: Some(1000),
        cache_creation_input_tokens: Some(200),
    });
    tally.update(&wire::Usage {
        output_tokens: Some(42),
        ..wire::Usage::default()
    });
    let usage = tally.usage();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens
        ),
        (1210, 42, 1000, 200)
    );
}

#[test]
fn thinking_blocks_go_back_first_and_thinking_drops_the_temperature() {
    use crate::conversation::{Reasoning, ThinkingBlock};
    let reasoning = Reasoning {
        blocks: vec![
            ThinkingBlock::Thinking {
                thinking: "plan".into(),
                signature: "sig".into(),
            },
            ThinkingBlock::RedactedThinking {
                data: "opaque".into(),
            },
        ],
        ..Reasoning::default()
    };
    let req = ChatRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![
            Message::user("hi"),
            Message::assistant_with("Looking.", vec![call("t1", "Read", "{}")], reasoning),
            result("t1", "contents", false),
        ]
        .into(),
        tools: vec![tool("Read")],
        max_tokens: None,
        temperature: Some(0.5),
    };
    for thinking in [None, Some(2048)] {
        let shape = Shape {
            thinking,
            ceiling: None,
        };
        let body = serde_json::to_value(request(&req, "claude-sonnet-4-5", shape)).unwrap();
        let kinds: Vec<&str> = body["messages"][1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["thinking", "redacted_thinking", "text", "tool_use"]);
        assert_eq!(body["messages"][1]["content"][0]["signature"], "sig");
        if let Some(budget) = thinking {
            assert_eq!(
                body["thinking"],
                json!({"type": "enabled", "budget_tokens": budget})
            );
            assert!(body.get("temperature").is_none());
            assert_eq!(body["max_tokens"], 2048 + 8192);
        } else {
            assert!(body.get("thinking").is_none());
            assert_eq!(body["temperature"], 0.5);
            assert_eq!(body["max_tokens"], 8192);
        }
    }
}
