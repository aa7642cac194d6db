//! Drives `provider::complete` in tests: small requests, a fast retry policy, and a record
//! of everything `complete` reported while it worked.

use std::time::Duration;

use cn_run::conversation::{Message, ToolSpec};
use cn_run::provider::{
    AssistantTurn, ChatRequest, ModelClient, Notice, ProviderError, RetryPolicy, complete,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// `max` retries with millisecond backoff, so fault tests stay fast.
pub fn quick_retries(max: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries: max,
        initial_delay: Duration::from_millis(2),
        factor: 2.0,
        max_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    }
}

/// A tool with a one-property schema.
pub fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

pub fn request(messages: Vec<Message>, tools: Vec<ToolSpec>) -> ChatRequest<'static> {
    ChatRequest {
        model: String::new(),
        system: "You are a careful test assistant.".into(),
        messages: messages.into(),
        tools,
        max_tokens: None,
        temperature: None,
    }
}

/// One user message, no tools.
pub fn hello() -> ChatRequest<'static> {
    request(vec![Message::user("Say hello.")], vec![])
}

/// One retry notice.
#[derive(Debug, Clone)]
pub struct Retry {
    pub attempt: u32,
    pub delay: Duration,
    pub kind: &'static str,
    pub message: String,
}

/// The outcome of one `complete` call.
#[derive(Debug)]
pub struct Run {
    pub result: Result<AssistantTurn, ProviderError>,
    /// Every text delta, concatenated (including text of attempts that were retried).
    pub streamed: String,
    pub retries: Vec<Retry>,
}

impl Run {
    pub fn turn(&self) -> &AssistantTurn {
        match &self.result {
            Ok(turn) => turn,
            Err(err) => panic!("expected an answer, got {err:?} after {:?}", self.retries),
        }
    }

    pub fn error(&self) -> &ProviderError {
        match &self.result {
            Ok(turn) => panic!("expected an error, got {turn:?}"),
            Err(err) => err,
        }
    }

    pub fn retry_kinds(&self) -> Vec<&'static str> {
        self.retries.iter().map(|r| r.kind).collect()
    }
}

pub async fn run(
    client: &dyn ModelClient,
    request: &ChatRequest<'_>,
    policy: &RetryPolicy,
    idle: Duration,
) -> Run {
    run_cancellable(client, request, policy, idle, &CancellationToken::new()).await
}

pub async fn run_cancellable(
    client: &dyn ModelClient,
    request: &ChatRequest<'_>,
    policy: &RetryPolicy,
    idle: Duration,
    cancel: &CancellationToken,
) -> Run {
    let mut streamed = String::new();
    let mut retries = Vec::new();
    let result = complete(
        client,
        request,
        policy,
        idle,
        cancel,
        &mut |notice| match notice {
            Notice::TextDelta(text) => streamed.push_str(text),
            Notice::ToolCallStarted => {}
            Notice::Retry {
                attempt,
                delay,
                error,
                ..
            } => retries.push(Retry {
                attempt,
                delay,
                kind: error.kind(),
                message: error.to_string(),
            }),
        },
    )
    .await;
    Run {
        result,
        streamed,
        retries,
    }
}
