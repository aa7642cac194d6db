//! Usage and reasoning state through gateways, against their recorded streams: LiteLLM's
//! `cache_creation_input_tokens` and OpenRouter's `cache_write_tokens` count as cache writes
//! (priced at the write premium), reads as reads; OpenRouter's streamed `reasoning_details`
//! go back joined and unmodified on the message with the tool call.

use serde_json::{Value, json};

use crate::support::http::MockServer;
use crate::support::replay::{fixture, run_replayed};

/// Claude Sonnet 4.5's list price (context/pricing.rs), per million tokens.
const INPUT: f64 = 3.00;
const OUTPUT: f64 = 15.00;
const CACHE_READ: f64 = 0.30;
const CACHE_WRITE: f64 = 3.75;

#[tokio::test(flavor = "multi_thread")]
async fn cache_writes_and_reads_are_read_where_each_gateway_puts_them() {
    for server in ["litellm", "openrouter"] {
        let answer = fixture(server, "usage_cache.sse");
        let mock = MockServer::start(vec![answer.reply()]).await;
        let (r, _tmp) = run_replayed(server, &mock.url(), "Say hello.", "").await;
        assert_eq!(r.code, 0, "{server}: {}", r.stderr);
        assert_eq!(r.stdout, format!("{}\n", answer.text()), "{server}");
        let result = r.result();
        let usage = &result["usage"];
        // The fixtures' figures: a 3,400-token prompt, 1,800 read from and 1,500 written
        // to the cache, 12 output tokens.
        assert_eq!(usage["total_input_tokens"], 3400, "{server}: {usage}");
        assert_eq!(usage["cache_read_input_tokens"], 1800, "{server}: {usage}");
        assert_eq!(
            usage["cache_creation_input_tokens"], 1500,
            "{server}: {usage}"
        );
        assert_eq!(usage["input_tokens"], 100, "{server}: {usage}");
        assert_eq!(usage["output_tokens"], 12, "{server}: {usage}");
        let want = (100.0 * INPUT + 1800.0 * CACHE_READ + 1500.0 * CACHE_WRITE + 12.0 * OUTPUT)
            / 1_000_000.0;
        let cost = result["total_cost_usd"].as_f64().unwrap();
        assert!((cost - want).abs() < 1e-9, "{server}: {cost} != {want}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn openrouters_reasoning_details_go_back_joined_on_the_tool_call_message() {
    let call = fixture("openrouter", "reasoning_tool.sse");
    let after = fixture("openrouter", "after_tool.sse");
    let mock = MockServer::start(vec![call.reply(), after.reply()]).await;
    let (r, _tmp) = run_replayed("openrouter", &mock.url(), "What does notes.txt say?", "").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let second = mock.requests()[1].json();
    let assistant: Value = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap();
    assert_eq!(assistant["tool_calls"][0]["id"], call.call_id());
    assert_eq!(
        assistant["reasoning_details"],
        json!([{
            "type": "reasoning.text",
            "format": "anthropic-claude-v1",
            "index": 0,
            "text": "I should read notes.txt first.",
            "signature": "ErUBCkYIBxgCIkBdKq8vV3f0e5Yc",
            "id": null
        }])
    );
    assert!(assistant.get("reasoning").is_none(), "{assistant}");
}
