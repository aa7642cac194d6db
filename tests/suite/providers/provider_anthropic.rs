//! `provider: anthropic` against a local server speaking the Messages API's SSE events:
//! text and tool-use blocks, cache usage, the request body with its cache markers, and the
//! failures specific to Anthropic (`overloaded_error` mid-stream, HTTP 529).

use std::time::Duration;

use cn_run::conversation::{Message, ToolCall};
use cn_run::provider::anthropic::{AnthropicClient, AnthropicConfig};
use cn_run::provider::{FinishReason, ProviderError};
use cn_run::secret::Secret;
use serde_json::json;

use crate::support::http::{Chunk, MockServer, Reply};
use crate::support::model::{hello, quick_retries, request, run, tool};
use crate::support::sse::anthropic;

const KEY: &str = "sk-ant-test-77e1";
const IDLE: Duration = Duration::from_secs(10);

fn client(server: &MockServer) -> AnthropicClient {
    let mut config = AnthropicConfig::new("claude-test");
    config.connection.api_base = format!("{}/", server.url());
    config.connection.api_key = Some(Secret::new(KEY));
    AnthropicClient::new(config).unwrap_or_else(|e| panic!("cannot build the client: {e}"))
}

#[tokio::test]
async fn a_streamed_answer_with_cache_usage_and_the_request_it_came_from() {
    let events = vec![
        anthropic::message_start(12, 3000, 500),
        anthropic::ping(),
        anthropic::content_block_start_text(0),
        anthropic::text_delta(0, "Hello"),
        anthropic::text_delta(0, ", world."),
        anthropic::content_block_stop(0),
        anthropic::message_delta("end_turn", 9),
        anthropic::message_stop(),
    ];
    let server = MockServer::start(vec![Reply::sse(200, events)]).await;
    let run = run(
        &client(&server),
        &request(vec![Message::user("hi")], vec![tool("Read"), tool("Bash")]),
        &quick_retries(0),
        IDLE,
    )
    .await;
    let turn = run.turn();
    assert_eq!(turn.text, "Hello, world.");
    assert_eq!(turn.finish, Some(FinishReason::Stop));
    let usage = turn.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens
        ),
        (3512, 9, 3000, 500)
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    let body = sent.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a careful test assistant.", "cache_control": {"type": "ephemeral"}}])
    );
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(
        body["tools"][1]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(body["tools"][1]["input_schema"]["type"], "object");
}

#[tokio::test]
async fn tool_use_blocks_in_pieces_and_in_parallel_are_assembled() {
    let events = vec![
        anthropic::message_start(30, 0, 0),
        anthropic::content_block_start_text(0),
        anthropic::text_delta(0, "Two things."),
        anthropic::content_block_stop(0),
        anthropic::tool_use_start(1, "toolu_1", "Read"),
        anthropic::input_json_delta(1, ""),
        anthropic::input_json_delta(1, "{\"path\": \"READ"),
        anthropic::input_json_delta(1, "ME.md\"}"),
        anthropic::content_block_stop(1),
        anthropic::tool_use_start(2, "toolu_2", "Exit"),
        anthropic::content_block_stop(2),
        anthropic::message_delta("tool_use", 25),
        anthropic::message_stop(),
    ];
    let server = MockServer::start(vec![Reply::sse(200, events)]).await;
    let run = run(&client(&server), &hello(), &quick_retries(0), IDLE).await;
    let turn = run.turn();
    assert_eq!(turn.text, "Two things.");
    assert_eq!(
        turn.tool_calls,
        vec![
            ToolCall {
                id: "toolu_1".into(),
                name: "Read".into(),
                arguments: "{\"path\": \"README.md\"}".into()
            },
            ToolCall {
                id: "toolu_2".into(),
                name: "Exit".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn the_history_pairs_tool_results_with_their_tool_use_ids() {
    let server = MockServer::start(vec![Reply::sse(200, anthropic::answer("ok"))]).await;
    let history = vec![
        Message::user("check"),
        Message::assistant(
            "Running.",
            vec![ToolCall {
                id: "toolu_9".into(),
                name: "Bash".into(),
                arguments: "{\"command\":\"ls\"}".into(),
            }],
        ),
        Message::Tool {
            tool_call_id: "toolu_9".into(),
            name: "Bash".into(),
            content: "denied by policy".into(),
            is_error: true,
            images: Vec::new(),
        },
    ];
    let mut req = request(history, vec![tool("Bash")]);
    req.max_tokens = Some(1000);
    let run = run(&client(&server), &req, &quick_retries(0), IDLE).await;
    assert_eq!(run.turn().text, "ok");
    let body = server.requests()[0].json();
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "check"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Running."},
                {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "denied by policy",
                 "is_error": true, "cache_control": {"type": "ephemeral"}}]}
        ])
    );
}

#[tokio::test]
async fn an_overloaded_error_mid_stream_is_retried() {
    let overloaded = vec![
        anthropic::message_start(10, 0, 0),
        anthropic::content_block_start_text(0),
        anthropic::text_delta(0, "Star"),
        anthropic::error("overloaded"),
    ];
    let server = MockServer::start(vec![
        Reply::sse(200, overloaded),
        Reply::sse(200, anthropic::answer("Started over.")),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(2), IDLE).await;
    assert_eq!(run.turn().text, "Started over.");
    assert_eq!(run.retry_kinds(), ["server"]);
    assert!(
        run.retries[0].message.contains("overloaded"),
        "{}",
        run.retries[0].message
    );
}

#[tokio::test]
async fn http_529_and_429_are_retried_with_their_retry_after() {
    let server = MockServer::start(vec![
        Reply::json(529, &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
            .with_header("retry-after", "0"),
        Reply::json(429, &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}))
            .with_header("retry-after-ms", "15"),
        Reply::sse(200, anthropic::answer("there")),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(3), IDLE).await;
    assert_eq!(run.turn().text, "there");
    assert_eq!(run.retry_kinds(), ["server", "rate_limited"]);
    assert_eq!(run.retries[0].delay, Duration::ZERO);
    assert_eq!(run.retries[1].delay, Duration::from_millis(15));
}

#[tokio::test]
async fn a_bad_key_fails_at_once_without_showing_the_key() {
    let server = MockServer::start(vec![Reply::json(
        401,
        &json!({"type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}}),
    )])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(3), IDLE).await;
    assert_eq!(run.error().kind(), "auth");
    assert!(!run.error().to_string().contains(KEY));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_prompt_that_is_too_long_is_a_context_length_error() {
    let server = MockServer::start(vec![Reply::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 201234 tokens > 200000 maximum"}}),
    )])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(3), IDLE).await;
    assert!(matches!(run.error(), ProviderError::ContextLength(m) if m.contains("201234")));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn pings_hold_off_the_idle_timeout() {
    let mut chunks = vec![Chunk::from(anthropic::message_start(5, 0, 0))];
    chunks.extend((0..4).map(|_| Chunk::after(150, anthropic::ping())));
    chunks.extend(
        anthropic::answer("late but fine")
            .into_iter()
            .skip(1)
            .map(Chunk::from),
    );
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let run = run(
        &client(&server),
        &hello(),
        &quick_retries(0),
        Duration::from_millis(400),
    )
    .await;
    assert_eq!(run.turn().text, "late but fine");
}

#[tokio::test]
async fn a_stream_without_message_stop_or_stop_reason_is_retried() {
    let cut = vec![
        anthropic::message_start(10, 0, 0),
        anthropic::content_block_start_text(0),
        anthropic::text_delta(0, "Half"),
    ];
    let server = MockServer::start(vec![
        Reply::sse(200, cut),
        Reply::sse(200, anthropic::answer("Whole")),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(1), IDLE).await;
    assert_eq!(run.turn().text, "Whole");
    assert_eq!(run.retry_kinds(), ["network"]);
}
