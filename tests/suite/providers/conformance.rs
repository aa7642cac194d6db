//! The conformance suite: the real binary against a loopback server that replays what real
//! servers send (`tests/fixtures/servers/`, each file naming its source). Every server gives
//! a text answer and a tool round trip (`Read notes.txt`, then an answer); reasoning models
//! must get their reasoning state back on the second request; every request body must
//! validate against OpenAI's or Anthropic's published request schema.

use std::path::Path;

use serde_json::Value;

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::replay::{
    Fixture, api_schema, fixture, run_replayed, schema_errors, write_replayed_job,
};
use crate::support::runner::{Run, cn_run, run};

const KEY: &str = crate::support::replay::REPLAY_KEY;

fn write_job(dir: &Path, server: &str, url: &str, prompt: &str) -> std::path::PathBuf {
    write_replayed_job(dir, server, url, prompt, "  retry: {max_retries: 0}\n")
}

async fn run_job(server: &str, url: &str, prompt: &str) -> (Run, tempfile::TempDir) {
    run_replayed(server, url, prompt, "  retry: {max_retries: 0}\n").await
}

/// Every request body validates against the published schema of its API.
fn assert_schema_valid(server: &str, requests: &[RecordedRequest]) {
    let name = if server == "anthropic" {
        "anthropic_messages_request"
    } else {
        "openai_chat_request"
    };
    let schema = api_schema(name);
    for (n, request) in requests.iter().enumerate() {
        let errors = schema_errors(&schema, &request.json());
        assert!(
            errors.is_empty(),
            "{server} request {n} breaks {name}: {errors:#?}"
        );
    }
}

/// The reply queue for a server: the fixtures in order, except Mistral, which refuses any
/// request that carries `stream_options` (its validator forbids extra fields).
async fn replay(server: &str, fixtures: Vec<Fixture>) -> MockServer {
    if server != "mistral" {
        return MockServer::start(fixtures.iter().map(Fixture::reply).collect()).await;
    }
    let refusal = fixture("mistral", "refused_stream_options.json").body;
    let queue = std::sync::Mutex::new(std::collections::VecDeque::from(fixtures));
    MockServer::start_with(move |request| {
        if request.json().get("stream_options").is_some() {
            return Reply::text(422, "application/json", refusal.clone());
        }
        let next = queue.lock().unwrap().pop_front();
        next.map_or_else(
            || Reply::text(500, "text/plain", "no reply left"),
            |f| f.reply(),
        )
    })
    .await
}

async fn text_answer(server: &str) {
    let answer = fixture(server, "text.sse");
    let mock = replay(server, vec![answer.clone()]).await;
    let (r, _tmp) = run_job(server, &mock.url(), "Say hello.").await;
    assert_eq!(r.code, 0, "{server}: {r:#?}");
    assert_eq!(r.stdout, format!("{}\n", answer.text()), "{server}");
    let result = r.result();
    assert_eq!(result["stop_reason"], "stop", "{server}");
    assert!(
        result["usage"]["output_tokens"].as_u64().unwrap_or(0) > 0 || server == "lmstudio",
        "{server}: usage is read where the server puts it: {}",
        result["usage"]
    );
    assert_schema_valid(server, &mock.requests());
}

/// The second request's answer to the tool call: (call id, content).
fn tool_result(server: &str, body: &Value) -> (String, String) {
    let messages = body["messages"].as_array().unwrap();
    if server == "anthropic" {
        let block = messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| b["type"] == "tool_result")
            .unwrap_or_else(|| panic!("no tool_result in {body}"));
        return (
            block["tool_use_id"].as_str().unwrap().to_owned(),
            block["content"].as_str().unwrap_or_default().to_owned(),
        );
    }
    let m = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message in {body}"));
    (
        m["tool_call_id"].as_str().unwrap().to_owned(),
        m["content"].as_str().unwrap().to_owned(),
    )
}

/// The assistant message that asked for the tool, in the second request.
fn assistant_turn(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap_or_else(|| panic!("no assistant message in {body}"))
}

/// A tool round trip: the requests the server got, the run, and its result.json.
async fn tool_round_trip(server: &str) -> (Vec<RecordedRequest>, Run, Value) {
    let call = fixture(server, "tool.sse");
    let answer = fixture(server, "after_tool.sse");
    let mock = replay(server, vec![call.clone(), answer.clone()]).await;
    let (r, _tmp) = run_job(server, &mock.url(), "What does notes.txt say?").await;
    assert_eq!(r.code, 0, "{server}: {r:#?}");
    assert_eq!(r.stdout, format!("{}\n", answer.text()), "{server}");
    let requests: Vec<RecordedRequest> = mock
        .requests()
        .into_iter()
        .filter(|q| q.json().get("stream_options").is_none() || server != "mistral")
        .collect();
    assert_eq!(requests.len(), 2, "{server}: {requests:#?}");
    let (id, content) = tool_result(server, &requests[1].json());
    assert_eq!(id, call.call_id(), "{server}: the result answers the call");
    assert!(
        content.contains("hello notes"),
        "{server}: the tool ran with the whole arguments: {content}"
    );
    let finished = r.events_of("tool.finished");
    assert_eq!(finished.len(), 1, "{server}: one call, run once");
    assert_schema_valid(server, &mock.requests());
    let all = std::fs::read_to_string(r.out.as_ref().unwrap().join("session.jsonl")).unwrap()
        + &r.stderr
        + &r.stdout;
    assert!(!all.contains(KEY), "{server}: the key leaked");
    let result = r.result();
    (requests, r, result)
}

macro_rules! server_tests {
    ($($name:ident: $dir:literal),* $(,)?) => {
        mod text {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    super::text_answer($dir).await;
                }
            )*
        }
        mod tool_round_trip {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    super::tool_round_trip($dir).await;
                }
            )*
        }
    };
}

server_tests! {
    llamacpp: "llamacpp",
    vllm: "vllm",
    ollama: "ollama",
    lmstudio: "lmstudio",
    azure: "azure",
    openrouter: "openrouter",
    deepseek: "deepseek",
    dashscope: "dashscope",
    groq: "groq",
    mistral: "mistral",
    gemini: "gemini",
    openai: "openai",
    anthropic: "anthropic",
}

#[tokio::test(flavor = "multi_thread")]
async fn deepseek_gets_its_reasoning_content_back_on_the_tool_call_message() {
    let (requests, _, _) = tool_round_trip("deepseek").await;
    let assistant = assistant_turn(&requests[1].json());
    assert_eq!(
        assistant["reasoning_content"],
        "I should read notes.txt first."
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "call_00_Ds8f7g6h5j4k");
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_gets_its_thought_signature_back_on_the_call() {
    let (requests, _, _) = tool_round_trip("gemini").await;
    let assistant = assistant_turn(&requests[1].json());
    let call = &assistant["tool_calls"][0];
    assert_eq!(call["id"], "function-call-6011857429316297310");
    assert_eq!(
        call["extra_content"]["google"]["thought_signature"],
        "CsQCAdHtim9Wz0Yx1rTq8N3Pv5e/kQ=="
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_thinking_blocks_go_back_unchanged_before_the_tool_use() {
    let (requests, _, _) = tool_round_trip("anthropic").await;
    let first = requests[0].json();
    assert_eq!(first["thinking"]["type"], "enabled");
    assert_eq!(first["thinking"]["budget_tokens"], 2048);
    assert!(
        first["max_tokens"].as_u64().unwrap() > 2048,
        "max_tokens above the budget: {}",
        first["max_tokens"]
    );
    let assistant = assistant_turn(&requests[1].json());
    let kinds: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["thinking", "redacted_thinking", "tool_use"]);
    assert_eq!(
        assistant["content"][0]["thinking"],
        "I need to read notes.txt."
    );
    assert_eq!(
        assistant["content"][0]["signature"],
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    );
    assert_eq!(
        assistant["content"][1]["data"],
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_reasoning_models_get_max_completion_tokens_and_no_temperature() {
    let (requests, _, _) = tool_round_trip("openai").await;
    for request in &requests {
        let body = request.json();
        assert_eq!(body["max_completion_tokens"], 4000);
        assert!(body.get("max_tokens").is_none(), "{body}");
        assert!(body.get("temperature").is_none(), "{body}");
        assert_eq!(body["stream_options"]["include_usage"], true);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mistral_refuses_stream_options_once_and_the_run_goes_on_without_it() {
    let call = fixture("mistral", "tool.sse");
    let answer = fixture("mistral", "after_tool.sse");
    let mock = replay("mistral", vec![call, answer]).await;
    let (r, _tmp) = run_job("mistral", &mock.url(), "What does notes.txt say?").await;
    assert_eq!(r.code, 0, "{r:#?}");
    let with: Vec<bool> = mock
        .requests()
        .iter()
        .map(|q| q.json().get("stream_options").is_some())
        .collect();
    assert_eq!(with, [true, false, false], "refused once, then never sent");
    assert!(r.stderr.contains("stream_options"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_gets_its_deployment_path_api_version_and_api_key_header() {
    let _ = tool_round_trip("azure").await;
    let mock = replay("azure", vec![fixture("azure", "text.sse")]).await;
    let (r, _tmp) = run_job("azure", &mock.url(), "Say hello.").await;
    assert_eq!(r.code, 0, "{r:#?}");
    let request = &mock.requests()[0];
    assert_eq!(
        request.path,
        "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(request.header("api-key"), Some(KEY));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn groq_usage_is_read_from_x_groq() {
    let (_, _, result) = tool_round_trip("groq").await;
    let usage = &result["usage"];
    assert_eq!(usage["input_tokens"], 1500 + 1600, "{usage}");
    assert_eq!(usage["output_tokens"], 18 + 6, "{usage}");
}

/// Anthropic repeats the input counts in `message_delta`; they are counted once per turn.
#[tokio::test(flavor = "multi_thread")]
async fn anthropic_input_counted_once_though_message_delta_repeats_it() {
    let (_, _, result) = tool_round_trip("anthropic").await;
    let usage = &result["usage"];
    assert_eq!(usage["input_tokens"], 1800 + 40, "{usage}");
    assert_eq!(usage["total_input_tokens"], 3300 + 1940, "{usage}");
    assert_eq!(usage["output_tokens"], 89 + 12, "{usage}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_never_leaks_into_the_answer_or_the_assistant_content() {
    for server in ["llamacpp", "vllm", "ollama", "mistral", "openrouter"] {
        let (requests, r, _) = tool_round_trip(server).await;
        let assistant = assistant_turn(&requests[1].json());
        let content = assistant["content"].as_str().unwrap_or_default();
        for word in [
            "Need the file",
            "The file has one line",
            "Answer from the result",
        ] {
            assert!(!content.contains(word), "{server}: {content}");
            assert!(!r.stdout.contains(word), "{server}: {}", r.stdout);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_still_sends_the_reasoning_back() {
    let mock = replay(
        "deepseek",
        vec![
            fixture("deepseek", "tool.sse"),
            fixture("deepseek", "after_tool.sse"),
        ],
    )
    .await;
    let tmp = tempfile::tempdir().unwrap();
    write_job(
        tmp.path(),
        "deepseek",
        &mock.url(),
        "What does notes.txt say?",
    );
    let job =
        std::fs::read_to_string(tmp.path().join("job.yaml")).unwrap() + "limits: {max_turns: 1}\n";
    std::fs::write(tmp.path().join("job.yaml"), job).unwrap();
    let dir = tmp.path().to_path_buf();
    let (first, second) = tokio::task::spawn_blocking(move || {
        let go = |args: &[&str]| {
            let mut cmd = cn_run(&dir);
            cmd.args(args).env("TEST_KEY", KEY);
            run(cmd, None)
        };
        (
            go(&["job.yaml"]),
            go(&["--resume", "latest", "--max-turns", "3", "-p", "go on"]),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        first.code, 4,
        "the turn limit stops it after the call: {first:#?}"
    );
    assert_eq!(second.code, 0, "{second:#?}");
    assert_eq!(second.stdout, "DeepSeek saw hello notes.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let assistant = assistant_turn(&requests[1].json());
    assert_eq!(
        assistant["reasoning_content"],
        "I should read notes.txt first."
    );
}

/// Every tool result of the second request, in order: (call id, content).
fn tool_results(server: &str, body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().unwrap();
    if server == "anthropic" {
        return messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().unwrap().to_owned(),
                    b["content"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
    }
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Two calls in one response: both run, each answered under its own id, in order.
async fn parallel_calls(server: &str) -> Vec<RecordedRequest> {
    let calls = fixture(server, "parallel.sse");
    let answer = fixture(server, "after_tool.sse");
    let mock = replay(server, vec![calls.clone(), answer.clone()]).await;
    let (r, _tmp) = run_job(server, &mock.url(), "Read notes.txt and list the folder.").await;
    assert_eq!(r.code, 0, "{server}: {r:#?}");
    assert_eq!(r.stdout, format!("{}\n", answer.text()), "{server}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{server}");
    let results = tool_results(server, &requests[1].json());
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    let want: Vec<&str> = calls.calls.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, want, "{server}");
    assert!(
        results[0].1.contains("hello notes"),
        "{server}: {results:?}"
    );
    assert!(results[1].1.contains("notes.txt"), "{server}: {results:?}");
    assert_eq!(r.events_of("tool.finished").len(), 2, "{server}");
    assert_schema_valid(server, &requests);
    requests
}

mod parallel {
    macro_rules! parallel_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    super::parallel_calls(stringify!($name)).await;
                }
            )*
        };
    }
    parallel_tests!(
        llamacpp, vllm, dashscope, gemini, ollama, anthropic, openai, groq
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_parallel_calls_keep_the_signature_on_the_first_call_only() {
    let requests = parallel_calls("gemini").await;
    let assistant = assistant_turn(&requests[1].json());
    let calls = assistant["tool_calls"].as_array().unwrap();
    assert_eq!(
        calls[0]["extra_content"]["google"]["thought_signature"],
        "Q2hlY2sgYm90aA=="
    );
    assert!(calls[1].get("extra_content").is_none(), "{}", calls[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_are_shown_in_their_own_words_on_one_line() {
    let cases = [
        (
            "openrouter",
            "error_upstream.json",
            400,
            "DeepInfra: { \"error\": { \"message\": \"tool_choice auto is not supported for this model\" } }",
        ),
        (
            "gemini",
            "error_missing_signature.json",
            400,
            "Function call is missing a thought_signature in functionCall parts.",
        ),
        (
            "vllm",
            "error_detail.json",
            400,
            "\"auto\" tool choice requires --enable-auto-tool-choice",
        ),
        (
            "mistral",
            "error_tools.json",
            422,
            "body.tools.0.function.name: String should match pattern",
        ),
    ];
    for (server, file, status, words) in cases {
        let body = fixture(server, file).body;
        let mock =
            MockServer::start_with(move |_| Reply::text(status, "application/json", body.clone()))
                .await;
        let (r, _tmp) = run_job(server, &mock.url(), "Say hello.").await;
        assert_eq!(r.code, 5, "{server}: {r:#?}");
        let reason = r.result()["reason"].as_str().unwrap().to_owned();
        assert!(reason.contains(words), "{server}: {reason}");
        assert!(!reason.contains('\n'), "{server}: one line: {reason}");
        assert!(!r.stderr.contains(KEY) && !reason.contains(KEY));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_goes_back_under_the_name_it_came_in() {
    // OpenRouter sent structured `reasoning_details` beside the text: those go back,
    // unmodified, as its "Preserving Reasoning Blocks" asks.
    let (requests, _, _) = tool_round_trip("openrouter").await;
    let assistant = assistant_turn(&requests[1].json());
    assert_eq!(
        assistant["reasoning_details"],
        serde_json::json!([{"type": "reasoning.text", "text": "Need the file.",
                            "format": "anthropic-claude-v1", "index": 0}])
    );
    assert!(assistant.get("reasoning").is_none(), "{assistant}");
    assert!(assistant.get("reasoning_content").is_none(), "{assistant}");
    let (requests, _, _) = tool_round_trip("deepseek").await;
    let assistant = assistant_turn(&requests[1].json());
    assert!(assistant.get("reasoning").is_none(), "{assistant}");
    // Servers whose answers had no reasoning with the call get neither field.
    for server in ["dashscope", "groq", "azure", "mistral"] {
        let (requests, _, _) = tool_round_trip(server).await;
        let assistant = assistant_turn(&requests[1].json());
        assert!(
            assistant.get("reasoning").is_none() && assistant.get("reasoning_content").is_none(),
            "{server}: {assistant}"
        );
    }
}
