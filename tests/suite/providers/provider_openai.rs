//! `provider: openai` against a local server speaking real SSE bytes: answers, tool calls,
//! usage, the request body, and every failure a CI run meets (rate limits, outages, bad
//! keys, full context, proxies' HTML pages, truncated, stalled and reset streams).

use std::time::{Duration, Instant};

use cn_run::conversation::{Message, ToolCall};
use cn_run::provider::openai::{OpenAiClient, OpenAiConfig};
use cn_run::provider::{FinishReason, ProviderError};
use cn_run::secret::Secret;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::http::{Chunk, MockServer, Reply};
use crate::support::model::{hello, quick_retries, request, run, run_cancellable, tool};
use crate::support::sse::openai;

const KEY: &str = "sk-test-4f9a2c";
const IDLE: Duration = Duration::from_secs(10);

fn client(server: &MockServer) -> OpenAiClient {
    let mut config = OpenAiConfig::new(format!("{}/v1/", server.url()), "gpt-test");
    config.connection.api_key = Some(Secret::new(KEY));
    OpenAiClient::new(config).unwrap_or_else(|e| panic!("cannot build the client: {e}"))
}

fn ok_answer(text: &str) -> Reply {
    Reply::sse(200, openai::answer(text))
}

#[tokio::test]
async fn a_streamed_answer_arrives_whole_even_when_chunks_split_characters() {
    let mut bytes = Vec::new();
    for event in [
        openai::role(),
        openai::text("Grüße, "),
        openai::text("wörld ✓"),
        openai::finish("stop"),
        openai::done(),
    ] {
        bytes.extend_from_slice(event.as_bytes());
    }
    // Seven-byte chunks cut through events, lines and multi-byte characters.
    let chunks: Vec<Chunk> = bytes.chunks(7).map(|c| Chunk::from(c.to_vec())).collect();
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let run = run(&client(&server), &hello(), &quick_retries(0), IDLE).await;
    let turn = run.turn();
    assert_eq!(turn.text, "Grüße, wörld ✓");
    assert_eq!(run.streamed, "Grüße, wörld ✓");
    assert_eq!(turn.finish, Some(FinishReason::Stop));
    assert!(turn.tool_calls.is_empty());

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = sent.json();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are a careful test assistant."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Say hello."})
    );
    assert!(
        body.get("tools").is_none(),
        "no tools offered means no tools key: {body}"
    );
}

#[tokio::test]
async fn tool_calls_in_many_pieces_and_in_parallel_are_assembled() {
    let mut chunks = vec![openai::role(), openai::text("Reading both.")];
    chunks.extend(openai::tool_call(
        0,
        "call_a",
        "Read",
        &["{\"pa", "th\": \"src/", "main.rs\"}"],
    ));
    chunks.extend(openai::tool_call(
        1,
        "call_b",
        "List",
        &["{\"path\"", ": \".\"}"],
    ));
    chunks.push(openai::tool_args(0, ""));
    chunks.extend([
        openai::finish("tool_calls"),
        openai::usage(1200, 40, 1024),
        openai::done(),
    ]);
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let req = request(
        vec![Message::user("look")],
        vec![tool("Read"), tool("List")],
    );
    let run = run(&client(&server), &req, &quick_retries(0), IDLE).await;
    let turn = run.turn();
    assert_eq!(turn.text, "Reading both.");
    assert_eq!(
        turn.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "Read".into(),
                arguments: "{\"path\": \"src/main.rs\"}".into()
            },
            ToolCall {
                id: "call_b".into(),
                name: "List".into(),
                arguments: "{\"path\": \".\"}".into()
            },
        ]
    );
    assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
    let usage = turn.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens
        ),
        (1200, 40, 1024)
    );

    let body = server.requests()[0].json();
    assert_eq!(body["tools"][1]["type"], "function");
    assert_eq!(body["tools"][1]["function"]["name"], "List");
    assert_eq!(body["tools"][1]["function"]["parameters"]["type"], "object");
}

/// A user message, an assistant turn with two Read calls, and both results (one an error).
fn two_reads_and_their_results() -> Vec<Message> {
    vec![
        Message::user("fix it"),
        Message::assistant(
            "",
            vec![
                ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: "{\"path\":\"a\"}".into(),
                },
                ToolCall {
                    id: "c2".into(),
                    name: "Read".into(),
                    arguments: "{\"path\":\"b\"}".into(),
                },
            ],
        ),
        Message::Tool {
            tool_call_id: "c1".into(),
            name: "Read".into(),
            content: "A".into(),
            is_error: false,
            images: Vec::new(),
        },
        Message::Tool {
            tool_call_id: "c2".into(),
            name: "Read".into(),
            content: "no such file".into(),
            is_error: true,
            images: Vec::new(),
        },
    ]
}

#[tokio::test]
async fn the_history_is_sent_with_tool_results_paired_to_their_calls() {
    let server = MockServer::start(vec![ok_answer("done")]).await;
    let mut config = OpenAiConfig::new(server.url(), "local-model");
    config.connection.headers = vec![("X-Team".into(), "ci".into())];
    let client = OpenAiClient::new(config).unwrap();
    let mut req = request(two_reads_and_their_results(), vec![tool("Read")]);
    req.max_tokens = Some(512);
    req.temperature = Some(0.2);
    let run = run(&client, &req, &quick_retries(0), IDLE).await;
    assert_eq!(run.turn().text, "done");

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        None,
        "no key configured, no Authorization header"
    );
    assert_eq!(sent.header("x-team"), Some("ci"));
    let body = sent.json();
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["temperature"], 0.2);
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(messages[2]["content"], serde_json::Value::Null);
    assert_eq!(messages[2]["tool_calls"][1]["id"], "c2");
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        "{\"path\":\"b\"}"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "A"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "c2", "content": "no such file"})
    );
}

#[tokio::test]
async fn a_rate_limit_then_an_outage_are_retried_until_the_answer_comes() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            &json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .with_header("retry-after", "0"),
        Reply::json(
            500,
            &json!({"error": {"message": "internal", "type": "server_error"}}),
        ),
        ok_answer("finally"),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(5), IDLE).await;
    assert_eq!(run.turn().text, "finally");
    assert_eq!(run.retry_kinds(), ["rate_limited", "server"]);
    assert_eq!(run.retries[0].attempt, 1);
    assert_eq!(
        run.retries[0].delay,
        Duration::ZERO,
        "Retry-After: 0 is honoured"
    );
    // Second retry without Retry-After: backoff 2 ms × 2, with jitter in [0.5, 1).
    let backoff = run.retries[1].delay;
    assert!(
        backoff >= Duration::from_millis(2) && backoff < Duration::from_millis(4),
        "{backoff:?}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn retry_after_ms_sets_the_wait() {
    let server = MockServer::start(vec![
        Reply::json(429, &json!({"error": {"message": "slow down"}}))
            .with_header("retry-after-ms", "30"),
        ok_answer("ok"),
    ])
    .await;
    let started = Instant::now();
    let run = run(&client(&server), &hello(), &quick_retries(1), IDLE).await;
    assert_eq!(run.turn().text, "ok");
    assert_eq!(run.retries[0].delay, Duration::from_millis(30));
    assert!(started.elapsed() >= Duration::from_millis(30));
}

#[tokio::test]
async fn a_persistent_outage_fails_after_the_last_retry() {
    let replies = (0..4)
        .map(|_| Reply::json(503, &json!({"error": {"message": "upstream down"}})))
        .collect();
    let server = MockServer::start(replies).await;
    let run = run(&client(&server), &hello(), &quick_retries(3), IDLE).await;
    assert!(
        matches!(run.error(), ProviderError::Server { status: 503, message, .. } if message == "upstream down"),
        "{:?}",
        run.error()
    );
    assert_eq!(
        run.retries.iter().map(|r| r.attempt).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_bad_key_fails_at_once_without_showing_the_key() {
    let server = MockServer::start(vec![
        Reply::json(401, &json!({"error": {"message": format!("Incorrect API key provided: {KEY}."), "code": "invalid_api_key"}})),
        ok_answer("never"),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(5), IDLE).await;
    let err = run.error();
    assert_eq!(err.kind(), "auth");
    assert!(!err.to_string().contains(KEY), "{err}");
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    assert!(run.retries.is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn exhausted_quota_is_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        429,
        &json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
    )])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(5), IDLE).await;
    assert_eq!(run.error().kind(), "quota");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_full_context_window_is_reported_without_retry() {
    let server = MockServer::start(vec![Reply::json(
        400,
        &json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
                         "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    )])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(5), IDLE).await;
    match run.error() {
        ProviderError::ContextLength(message) => assert!(message.contains("8192"), "{message}"),
        other => panic!("expected ContextLength, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_in_a_200_json_body_is_never_an_answer() {
    let server = MockServer::start(vec![
        Reply::json(200, &json!({"error": {"message": "The server is overloaded", "type": "server_error"}})),
        Reply::json(200, &json!({"object": "error", "message": "bad sampling parameters", "type": "BadRequestError", "code": 400})),
    ])
    .await;
    let run1 = run(&client(&server), &hello(), &quick_retries(1), IDLE).await;
    assert_eq!(run1.retry_kinds(), ["server"]);
    assert!(
        matches!(run1.error(), ProviderError::BadRequest { status: 400, message, .. } if message == "bad sampling parameters")
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_gives_its_answer() {
    let completion = json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.",
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a\"}"}}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 7}
    });
    let server = MockServer::start(vec![Reply::json(200, &completion)]).await;
    let run = run(&client(&server), &hello(), &quick_retries(0), IDLE).await;
    let turn = run.turn();
    assert_eq!(turn.text, "Checking.");
    assert_eq!(turn.tool_calls[0].arguments, "{\"path\":\"a\"}");
    assert_eq!(turn.usage.unwrap().input_tokens, 50);
}

#[tokio::test]
async fn a_proxy_html_error_page_becomes_a_short_readable_message() {
    let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\
        <body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
    let server = MockServer::start(vec![Reply::text(502, "text/html", page)]).await;
    let run = run(&client(&server), &hello(), &quick_retries(0), IDLE).await;
    match run.error() {
        ProviderError::Server {
            status: 502,
            message,
            ..
        } => {
            assert_eq!(message, "502 Bad Gateway 502 Bad Gateway nginx");
        }
        other => panic!("expected a 502 server error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stream_that_ends_early_is_retried() {
    let cut_short = vec![openai::role(), openai::text("Half an ans")];
    let server = MockServer::start(vec![
        Reply::sse(200, cut_short),
        Reply::sse(200, openai::answer("A whole answer.")).close_after(150),
        ok_answer("A whole answer."),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(3), IDLE).await;
    assert_eq!(run.turn().text, "A whole answer.");
    assert_eq!(run.retry_kinds(), ["network", "network"]);
    assert!(
        run.retries[0].message.contains("stream ended early"),
        "{}",
        run.retries[0].message
    );
}

#[tokio::test]
async fn a_stalled_stream_times_out_and_is_retried() {
    let server = MockServer::start(vec![
        Reply::sse(200, openai::answer("never finished")).stall_after(120),
        ok_answer("after the stall"),
    ])
    .await;
    let started = Instant::now();
    let run = run(
        &client(&server),
        &hello(),
        &quick_retries(2),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(run.turn().text, "after the stall");
    assert_eq!(run.retry_kinds(), ["stalled"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn keep_alive_comments_hold_off_the_idle_timeout() {
    let mut chunks = vec![Chunk::from(openai::role())];
    chunks.extend((0..4).map(|_| Chunk::after(150, ": still thinking\n\n")));
    chunks.extend(
        openai::answer("worth the wait")
            .into_iter()
            .map(Chunk::from),
    );
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let idle = Duration::from_millis(400);
    let run = run(&client(&server), &hello(), &quick_retries(0), idle).await;
    assert_eq!(run.turn().text, "worth the wait");
    assert!(run.retries.is_empty());
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_retried() {
    let server = MockServer::start(vec![
        Reply::sse(200, openai::answer("lost")).reset_after(200),
        ok_answer("recovered"),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(2), IDLE).await;
    assert_eq!(run.turn().text, "recovered");
    assert_eq!(run.retry_kinds(), ["network"]);
}

#[tokio::test]
async fn an_error_event_inside_the_stream_is_classified_and_retried() {
    let server = MockServer::start(vec![
        Reply::sse(
            200,
            [
                openai::role(),
                openai::text("par"),
                openai::error("rate_limit_exceeded", "slow"),
            ],
        ),
        ok_answer("full"),
    ])
    .await;
    let run = run(&client(&server), &hello(), &quick_retries(2), IDLE).await;
    assert_eq!(run.turn().text, "full");
    assert_eq!(run.retry_kinds(), ["rate_limited"]);
    assert_eq!(
        run.streamed, "parfull",
        "the retried attempt's text was streamed too"
    );
}

#[tokio::test]
async fn malformed_tool_arguments_are_passed_through_verbatim() {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(
        0,
        "c9",
        "Read",
        &["{\"path\": ", "\"a.md\""],
    ));
    chunks.extend([openai::finish("tool_calls"), openai::done()]);
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let run = run(&client(&server), &hello(), &quick_retries(0), IDLE).await;
    assert_eq!(run.turn().tool_calls[0].arguments, "{\"path\": \"a.md\"");
}

#[tokio::test]
async fn an_unreachable_server_is_a_network_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client =
        OpenAiClient::new(OpenAiConfig::new(format!("http://127.0.0.1:{port}"), "m")).unwrap();
    let run = run(&client, &hello(), &quick_retries(1), IDLE).await;
    assert_eq!(run.error().kind(), "network");
    assert_eq!(run.retry_kinds(), ["network"]);
}

#[tokio::test]
async fn cancelling_ends_a_stalled_request_promptly() {
    let server =
        MockServer::start(vec![Reply::sse(200, openai::answer("x")).stall_after(10)]).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let run = run_cancellable(
        &client(&server),
        &hello(),
        &quick_retries(3),
        Duration::from_secs(60),
        &cancel,
    )
    .await;
    assert_eq!(run.error().kind(), "cancelled");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_malformed_api_base_is_a_configuration_error() {
    let err = OpenAiClient::new(OpenAiConfig::new("localhost:8000", "m")).unwrap_err();
    assert_eq!(err.kind(), "config");
    let mut config = OpenAiConfig::new("http://127.0.0.1:1", "m");
    config.connection.headers = vec![("bad header".into(), "x".into())];
    assert_eq!(OpenAiClient::new(config).unwrap_err().kind(), "config");
}
