//! Every recorded error of every named server (`tests/fixtures/servers/*/*.http`, each naming
//! its source) replayed byte for byte to the client that speaks to it: the error is of the kind
//! the fixture expects (a full context window, a rate limit to wait out, a quota, a content
//! filter, an order refusal, a web page instead of a stream), keeps the server's words, and
//! carries the wait the server named.

use std::time::Duration;

use cn_run::conversation::{Message, ToolCall};
use cn_run::provider::anthropic::{AnthropicClient, AnthropicConfig};
use cn_run::provider::openai::{OpenAiClient, OpenAiConfig};
use cn_run::provider::{ChatRequest, ModelClient, ProviderError};
use cn_run::secret::Secret;

use crate::support::http::{MockServer, Reply};
use crate::support::model::{Run, hello, quick_retries, request, run};
use crate::support::replay::{HttpFixture, http_fixture, http_fixtures};

const KEY: &str = "sk-errors-5e1f";

fn client(server: &str, url: &str) -> Box<dyn ModelClient> {
    if server == "anthropic" {
        let mut config = AnthropicConfig::new("claude-opus-4-6");
        config.connection.api_base = url.to_owned();
        config.connection.api_key = Some(Secret::new(KEY));
        return Box::new(AnthropicClient::new(config).unwrap());
    }
    let mut config = OpenAiConfig::new(format!("{url}/v1"), "some-model");
    config.connection.api_key = Some(Secret::new(KEY));
    Box::new(OpenAiClient::new(config).unwrap())
}

/// One model request to `mock` through the client of `server`, with `retries` retries.
async fn ask(server: &str, mock: &MockServer, request: &ChatRequest<'_>, retries: u32) -> Run {
    let client = client(server, &mock.url());
    run(
        client.as_ref(),
        request,
        &quick_retries(retries),
        Duration::from_secs(10),
    )
    .await
}

/// The error `complete` ends with when the server answers every request with `fixture`.
async fn error_of(server: &str, fixture: &HttpFixture) -> ProviderError {
    let replies = vec![fixture.reply(), fixture.reply(), fixture.reply()];
    let mock = MockServer::start(replies).await;
    ask(server, &mock, &hello(), 0).await.error().clone()
}

#[tokio::test]
async fn every_recorded_error_is_read_as_its_server_means_it() {
    let all = http_fixtures();
    assert!(all.len() >= 20, "{all:?}");
    for (server, file) in all {
        let fixture = http_fixture(&server, &file);
        let err = error_of(&server, &fixture).await;
        let name = &fixture.name;
        if let Some(kind) = &fixture.kind {
            assert_eq!(err.kind(), kind, "{name}: {err}");
        }
        let text = err.to_string();
        for words in &fixture.words {
            assert!(
                text.contains(words.as_str()),
                "{name}: {words:?} not in {text}"
            );
        }
        assert!(!text.contains(KEY), "{name}: {text}");
        if let Some(wait) = fixture.wait {
            let got = err
                .retry_after()
                .unwrap_or_else(|| panic!("{name}: no wait in {err:?}"));
            assert!(
                (got.as_secs_f64() - wait).abs() < 0.01,
                "{name}: waited {got:?}, the server named {wait} s"
            );
        }
    }
}

/// A daily cap's wait is not waited out: the error says how long and when to retry.
#[tokio::test]
async fn a_daily_cap_ends_at_once_with_the_servers_figure_and_when_to_retry() {
    let fixture = http_fixture("github_models", "error_daily.http");
    let mock = MockServer::start(vec![fixture.reply(), fixture.reply()]).await;
    let run = ask("github_models", &mock, &hello(), 10).await;
    let text = run.error().to_string();
    assert!(run.retries.is_empty(), "{:?}", run.retries);
    assert_eq!(mock.requests().len(), 1);
    assert!(text.contains("1 h 33 min 51 s"), "{text}");
    assert!(text.contains("retry after 20"), "{text}");
}

/// A server that refuses a user turn after tool results (Mistral's validator before April
/// 2026, behind a model name cn-run does not know as Mistral's) gets the same request again
/// in the strict order, once, and the run goes on.
#[tokio::test]
async fn an_order_refusal_is_answered_by_sending_the_strict_order() {
    let refusal = http_fixture("mistral", "error_order_after_tool.http");
    let answer = crate::support::replay::fixture("mistral", "text.sse");
    let mock = MockServer::start_with(move |req| {
        match crate::support::strict::mistral_refusal(&req.json()) {
            Some(_) => refusal.reply(),
            None => answer.reply(),
        }
    })
    .await;
    let history = vec![
        Message::user("task"),
        Message::assistant(
            "",
            vec![ToolCall {
                id: "D681PevKs".into(),
                name: "Read".into(),
                arguments: "{\"filepath\":\"notes.txt\"}".into(),
            }],
        ),
        Message::Tool {
            tool_call_id: "D681PevKs".into(),
            name: "Read".into(),
            content: "notes".into(),
            is_error: false,
            images: Vec::new(),
        },
        Message::user("The checks failed: fix the test."),
    ];
    let run = ask("vllm", &mock, &request(history, vec![]), 0).await;
    assert_eq!(run.turn().text, "Mistral answers.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let roles: Vec<String> = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

/// An unanswered request is never sent twice for a web page: the same URL serves the same page.
#[tokio::test]
async fn a_web_page_instead_of_a_stream_is_not_retried() {
    for file in ["html_as_stream.http", "html_framed_as_data.http"] {
        let fixture = http_fixture("proxy", file);
        let mock =
            MockServer::start(vec![fixture.reply(), Reply::text(500, "text/plain", "x")]).await;
        let client = client("proxy", &mock.url());
        let run = run(
            client.as_ref(),
            &hello(),
            &quick_retries(3),
            Duration::from_secs(10),
        )
        .await;
        assert!(!run.error().is_retryable(), "{file}");
        assert_eq!(mock.requests().len(), 1, "{file}");
    }
}
