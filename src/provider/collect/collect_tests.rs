//! Unit tests for the retry loop, timeouts and cancellation, against an in-memory client.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::stream;
use tokio_util::sync::CancellationToken;

use super::{Notice, RetryPolicy, complete};
use crate::provider::{
    ChatRequest, EventStream, FinishReason, ModelClient, ModelInfo, ProviderError, StreamEvent,
};

/// One scripted attempt: an error before the stream, or the stream's items (then, if
/// `hang`, a stream that never ends).
enum Attempt {
    Fail(ProviderError),
    Items(Vec<Result<StreamEvent, ProviderError>>, bool),
}

struct Fake(Mutex<Vec<Attempt>>);

#[async_trait::async_trait]
impl ModelClient for Fake {
    async fn stream(&self, _request: &ChatRequest<'_>) -> Result<EventStream, ProviderError> {
        let next = self.0.lock().unwrap().remove(0);
        match next {
            Attempt::Fail(error) => Err(error),
            Attempt::Items(items, false) => Ok(Box::pin(stream::iter(items))),
            Attempt::Items(items, true) => Ok(Box::pin(futures_util::StreamExt::chain(
                stream::iter(items),
                stream::pending(),
            ))),
        }
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: "fake".into(),
            model: "m".into(),
        }
    }
}

fn request() -> ChatRequest<'static> {
    ChatRequest {
        model: "m".into(),
        system: "sys".into(),
        messages: vec![].into(),
        tools: vec![],
        max_tokens: None,
        temperature: None,
    }
}

fn quick(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_delay: Duration::from_millis(1),
        factor: 2.0,
        max_delay: Duration::from_millis(4),
        ..RetryPolicy::default()
    }
}

/// A token cancelled 30 ms from now, while the request or its backoff is under way.
fn cancelled_soon() -> CancellationToken {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        trigger.cancel();
    });
    cancel
}

fn server_error() -> ProviderError {
    ProviderError::Server {
        status: 503,
        message: "down".into(),
        retry_after: None,
    }
}

fn answer(text: &str) -> Attempt {
    Attempt::Items(
        vec![
            Ok(StreamEvent::TextDelta(text.into())),
            Ok(StreamEvent::Finish(FinishReason::Stop)),
        ],
        false,
    )
}

async fn run(
    fake: &Fake,
    policy: &RetryPolicy,
    idle: Duration,
    cancel: &CancellationToken,
) -> (Result<String, ProviderError>, Vec<String>) {
    let mut notices = Vec::new();
    let result = complete(fake, &request(), policy, idle, cancel, &mut |n| {
        notices.push(match n {
            Notice::TextDelta(t) => format!("text {t}"),
            Notice::ToolCallStarted => "tool call".to_owned(),
            Notice::Retry { attempt, error, .. } => format!("retry {attempt} {}", error.kind()),
        })
    })
    .await;
    (result.map(|turn| turn.text), notices)
}

/// `run` with `max_retries` quick retries, a 5 s idle timeout and no cancellation.
async fn run_quick(fake: &Fake, max_retries: u32) -> (Result<String, ProviderError>, Vec<String>) {
    run(
        fake,
        &quick(max_retries),
        Duration::from_secs(5),
        &CancellationToken::new(),
    )
    .await
}

#[test]
fn backoff_grows_by_the_factor_and_is_capped() {
    let policy = RetryPolicy::default();
    assert_eq!(policy.backoff(1), Duration::from_secs(1));
    assert_eq!(policy.backoff(2), Duration::from_millis(1600));
    assert_eq!(policy.backoff(3).as_millis(), 2560);
    assert_eq!(policy.backoff(20), Duration::from_secs(30));
    for _ in 0..100 {
        let d = policy.delay(2, None);
        assert!(
            d >= Duration::from_millis(800) && d < Duration::from_millis(1600),
            "{d:?}"
        );
    }
    assert_eq!(
        policy.delay(1, Some(Duration::from_secs(7))),
        Duration::from_secs(7)
    );
    assert_eq!(policy.wait_limit(), super::MAX_RETRY_WAIT);
    let ending = RetryPolicy {
        deadline: Some(std::time::Instant::now() + Duration::from_secs(20)),
        ..RetryPolicy::default()
    };
    assert!(ending.wait_limit() <= Duration::from_secs(20));
}

fn limited(wait: Duration) -> ProviderError {
    ProviderError::RateLimited {
        status: 429,
        message: "Rate limit of 50 per 86400s exceeded for UserByModelByDay.".into(),
        retry_after: Some(wait),
    }
}

/// A daily cap's `retry-after: 5631` ends the attempt at once, in the server's words and with
/// when to retry; it is neither cut to a shorter wait nor retried (it was cut to 120 s and
/// retried ten times before).
#[tokio::test]
async fn a_wait_longer_than_the_run_affords_ends_at_once_saying_when_to_retry() {
    let fake = Fake(Mutex::new(vec![
        Attempt::Fail(limited(Duration::from_secs(5631))),
        answer("never asked"),
    ]));
    let (result, notices) = run_quick(&fake, 10).await;
    let err = result.unwrap_err();
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(err.kind(), "rate_limited");
    assert!(!err.is_retryable());
    let text = err.to_string();
    assert!(text.contains("UserByModelByDay"), "{text}");
    assert!(text.contains("1 h 33 min 51 s"), "{text}");
    assert!(text.contains("retry after 20"), "{text}");
    // The run's own deadline counts too: 10 s is more than a run with 1 s left affords.
    let fake = Fake(Mutex::new(vec![
        Attempt::Fail(limited(Duration::from_secs(10))),
        answer("never asked"),
    ]));
    let policy = RetryPolicy {
        deadline: Some(std::time::Instant::now() + Duration::from_secs(1)),
        ..quick(3)
    };
    let (result, _) = run(
        &fake,
        &policy,
        Duration::from_secs(5),
        &CancellationToken::new(),
    )
    .await;
    assert!(result.unwrap_err().to_string().contains("retry after"));
}

/// A wait the run can afford is waited as the server named it, and the notice carries it.
#[tokio::test]
async fn a_short_server_wait_is_waited_as_named() {
    let fake = Fake(Mutex::new(vec![
        Attempt::Fail(limited(Duration::from_millis(30))),
        answer("after the wait"),
    ]));
    let started = Instant::now();
    let (result, notices) = run_quick(&fake, 3).await;
    assert_eq!(result.unwrap(), "after the wait");
    assert_eq!(notices, ["retry 1 rate_limited", "text after the wait"]);
    assert!(started.elapsed() >= Duration::from_millis(30));
}

#[tokio::test]
async fn transient_failures_before_and_during_the_stream_are_retried() {
    let fake = Fake(Mutex::new(vec![
        Attempt::Fail(server_error()),
        Attempt::Items(
            vec![
                Ok(StreamEvent::TextDelta("par".into())),
                Err(ProviderError::Network("reset".into())),
            ],
            false,
        ),
        answer("whole"),
    ]));
    let (result, notices) = run_quick(&fake, 5).await;
    assert_eq!(result.unwrap(), "whole");
    assert_eq!(
        notices,
        [
            "retry 1 server",
            "text par",
            "retry 2 network",
            "text whole"
        ]
    );
}

#[tokio::test]
async fn permanent_failures_are_not_retried_and_retries_run_out() {
    let auth = ProviderError::Auth {
        status: 401,
        message: "bad key".into(),
    };
    let fake = Fake(Mutex::new(vec![Attempt::Fail(auth), answer("never")]));
    let (result, notices) = run_quick(&fake, 5).await;
    assert_eq!(result.unwrap_err().kind(), "auth");
    assert!(notices.is_empty());

    let fake = Fake(Mutex::new(
        (0..3).map(|_| Attempt::Fail(server_error())).collect(),
    ));
    let (result, notices) = run_quick(&fake, 2).await;
    assert_eq!(result.unwrap_err().kind(), "server");
    assert_eq!(notices, ["retry 1 server", "retry 2 server"]);
}

#[tokio::test]
async fn a_silent_stream_stalls_and_is_retried() {
    let fake = Fake(Mutex::new(vec![
        Attempt::Items(vec![Ok(StreamEvent::TextDelta("a".into()))], true),
        answer("b"),
    ]));
    let started = Instant::now();
    let (result, notices) = run(
        &fake,
        &quick(1),
        Duration::from_millis(50),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(result.unwrap(), "b");
    assert_eq!(notices, ["text a", "retry 1 stalled", "text b"]);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cancellation_ends_a_hanging_request_promptly() {
    let fake = Fake(Mutex::new(vec![Attempt::Items(vec![], true)]));
    let cancel = cancelled_soon();
    let started = Instant::now();
    let (result, _) = run(&fake, &quick(3), Duration::from_secs(60), &cancel).await;
    assert_eq!(result.unwrap_err().kind(), "cancelled");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn cancellation_interrupts_the_backoff_sleep() {
    let fake = Fake(Mutex::new(vec![
        Attempt::Fail(server_error()),
        answer("late"),
    ]));
    let slow = RetryPolicy {
        max_retries: 3,
        initial_delay: Duration::from_secs(60),
        factor: 1.0,
        max_delay: Duration::from_secs(60),
        ..RetryPolicy::default()
    };
    let cancel = cancelled_soon();
    let started = Instant::now();
    let (result, notices) = run(&fake, &slow, Duration::from_secs(5), &cancel).await;
    assert_eq!(result.unwrap_err().kind(), "cancelled");
    assert_eq!(notices, ["retry 1 server"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The first piece of a tool call is announced once per attempt (the run starts its
/// checkpoint then, while the rest of the call streams in); text alone announces nothing.
#[tokio::test]
async fn the_first_tool_call_piece_is_announced_once_per_attempt() {
    let delta = |index: usize, args: &str| {
        Ok(StreamEvent::ToolCallDelta {
            index: Some(index),
            id: Some(format!("c{index}")),
            name: Some("Read".into()),
            arguments: args.into(),
            extra: None,
        })
    };
    let fake = Fake(Mutex::new(vec![
        Attempt::Items(
            vec![
                Ok(StreamEvent::TextDelta("looking".into())),
                delta(0, "{\"filepath\":"),
                Err(ProviderError::Network("reset".into())),
            ],
            false,
        ),
        Attempt::Items(
            vec![
                delta(0, "{\"filepath\":"),
                delta(0, "\"a\"}"),
                delta(1, "{}"),
                Ok(StreamEvent::Finish(FinishReason::ToolCalls)),
            ],
            false,
        ),
    ]));
    let (result, notices) = run_quick(&fake, 2).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(
        notices,
        ["text looking", "tool call", "retry 1 network", "tool call"]
    );
    let (_, notices) = run_quick(&Fake(Mutex::new(vec![answer("just text")])), 0).await;
    assert_eq!(notices, ["text just text"]);
}

/// A server that ends an answer for its own failure (`finish_reason: "error"`, vLLM's
/// `abort`) is asked again; the half answer is not taken.
#[tokio::test]
async fn an_answer_the_server_ended_for_its_own_failure_is_asked_again() {
    for word in ["error", "abort", "insufficient_system_resource"] {
        let fake = Fake(Mutex::new(vec![
            Attempt::Items(
                vec![
                    Ok(StreamEvent::TextDelta("half".into())),
                    Ok(StreamEvent::Finish(FinishReason::Failed(word.into()))),
                ],
                false,
            ),
            answer("whole"),
        ]));
        let (result, notices) = run_quick(&fake, 2).await;
        assert_eq!(result.unwrap(), "whole", "{word}");
        assert!(
            notices.contains(&"retry 1 server".to_owned()),
            "{word}: {notices:?}"
        );
    }
}
