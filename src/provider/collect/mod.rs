//! [`complete`]: one model request, start to finish, as the agent loop needs it.
//!
//! It opens the provider's stream, guards every wait with the idle timeout and the
//! cancellation token, assembles the events into one [`AssistantTurn`], and retries the whole
//! request when the failure is transient. Retrying the whole request is safe because nothing
//! of a response is committed to the conversation before it is complete.

pub(crate) mod assemble;
mod details;

use std::future::Future;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{AssistantTurn, ChatRequest, FinishReason, ModelClient, ProviderError, StreamEvent};
use assemble::Assembler;

/// The longest wait a server may ask for before a retry. A longer one (a daily quota's
/// `retry-after: 5631`) ends the run at once, saying when to try again: a CI job does not
/// wait out a quota, and retrying against it only spends the run's time.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(300);

/// Exponential backoff between attempts: `initial_delay × factor^(n-1)`, capped at
/// `max_delay`, times a random jitter in [0.5, 1). A wait the server names is waited as it
/// is, unless it is longer than `max_wait` or than the time left before `deadline`.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub initial_delay: Duration,
    pub factor: f64,
    pub max_delay: Duration,
    /// The longest server-named wait (default [`MAX_RETRY_WAIT`]).
    pub max_wait: Duration,
    /// When the run's time runs out: a wait that ends later ends the run at once.
    pub deadline: Option<Instant>,
}

impl Default for RetryPolicy {
    /// Continue's values: 10 retries, 1 s, ×1.6, at most 30 s.
    fn default() -> Self {
        RetryPolicy {
            max_retries: 10,
            initial_delay: Duration::from_secs(1),
            factor: 1.6,
            max_delay: Duration::from_secs(30),
            max_wait: MAX_RETRY_WAIT,
            deadline: None,
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1-based), before jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let secs = self.initial_delay.as_secs_f64() * self.factor.max(1.0).powi(exponent);
        let capped = secs.min(self.max_delay.as_secs_f64());
        Duration::try_from_secs_f64(capped).unwrap_or(self.max_delay)
    }

    /// The delay actually slept: the server's wait if it named one, otherwise the backoff
    /// with jitter.
    fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait,
            None => self.backoff(retry).mul_f64(0.5 + fastrand::f64() * 0.5),
        }
    }

    /// The longest wait this run can afford now: `max_wait`, or less when the run's time
    /// runs out sooner.
    pub fn wait_limit(&self) -> Duration {
        let left = self.deadline.map_or(self.max_wait, |d| {
            d.saturating_duration_since(Instant::now())
        });
        self.max_wait.min(left)
    }
}

/// The error for a server wait longer than the run can afford: the server's error, the wait,
/// and when to try again.
fn retry_later(error: ProviderError, wait: Duration, limit: Duration) -> ProviderError {
    let at = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(wait).unwrap_or(jiff::SignedDuration::MAX))
        .ok()
        .and_then(|t| t.round(jiff::Unit::Second).ok())
        .map_or_else(|| "a later time".to_owned(), |t| t.to_string());
    ProviderError::RetryLater {
        error: Box::new(error),
        wait,
        limit,
        retry_at: at,
    }
}

/// What [`complete`] reports while it works.
#[derive(Debug)]
pub enum Notice<'a> {
    /// A piece of the answer's text as it streams in. After a `Retry`, the text streamed so
    /// far is discarded: the answer starts again.
    TextDelta(&'a str),
    /// The first piece of a tool call arrived (once per attempt): the model is about to
    /// ask for something to run.
    ToolCallStarted,
    /// The request failed with a retryable error; it is sent again after `delay`.
    /// `server_wait` is the wait the server named, if it named one.
    Retry {
        attempt: u32,
        delay: Duration,
        server_wait: Option<Duration>,
        error: &'a ProviderError,
    },
}

/// Sends `request` and returns the complete answer, retrying transient failures.
///
/// `idle_timeout` bounds every wait for the provider (the response headers and each stream
/// event); when it passes, the attempt fails with [`ProviderError::Stalled`] (retried).
/// Cancelling `cancel` ends the call promptly with [`ProviderError::Cancelled`].
pub async fn complete(
    client: &dyn ModelClient,
    request: &ChatRequest<'_>,
    retry: &RetryPolicy,
    idle_timeout: Duration,
    cancel: &CancellationToken,
    on_notice: &mut (dyn FnMut(Notice<'_>) + Send),
) -> Result<AssistantTurn, ProviderError> {
    let mut retries = 0;
    loop {
        let error = match attempt(client, request, idle_timeout, cancel, on_notice).await {
            Ok(turn) => return Ok(turn),
            Err(error) => error,
        };
        if !error.is_retryable() {
            return Err(error);
        }
        let server_wait = error.retry_after();
        if let Some(wait) = server_wait {
            let limit = retry.wait_limit();
            if wait > limit {
                return Err(retry_later(error, wait, limit));
            }
        }
        if retries >= retry.max_retries {
            return Err(error);
        }
        retries += 1;
        let delay = retry.delay(retries, server_wait);
        // Said once, by the run's progress line for the `model.retry` event.
        tracing::debug!(
            attempt = retries,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            error = %error,
            "model request failed; retrying"
        );
        on_notice(Notice::Retry {
            attempt: retries,
            delay,
            server_wait,
            error: &error,
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            () = tokio::time::sleep(delay) => {}
        }
    }
}

/// One request: open, read to the end, assemble.
async fn attempt(
    client: &dyn ModelClient,
    request: &ChatRequest<'_>,
    idle_timeout: Duration,
    cancel: &CancellationToken,
    on_notice: &mut (dyn FnMut(Notice<'_>) + Send),
) -> Result<AssistantTurn, ProviderError> {
    let mut stream = guarded(cancel, idle_timeout, client.stream(request)).await??;
    let mut assembler = Assembler::default();
    let mut tool_call_seen = false;
    while let Some(item) = guarded(cancel, idle_timeout, stream.next()).await? {
        let item = item?;
        if !tool_call_seen && matches!(item, StreamEvent::ToolCallDelta { .. }) {
            tool_call_seen = true;
            on_notice(Notice::ToolCallStarted);
        }
        if let Some(text) = assembler.push(item)? {
            on_notice(Notice::TextDelta(&text));
        }
    }
    let turn = assembler.finish();
    // A server that ends an answer for its own failure is asked again (stop_words.rs).
    if let Some(FinishReason::Failed(word)) = &turn.finish {
        return Err(ProviderError::Interrupted(word.clone()));
    }
    Ok(turn)
}

/// Awaits `future` unless the token is cancelled or nothing happens for `idle`.
async fn guarded<F: Future>(
    cancel: &CancellationToken,
    idle: Duration,
    future: F,
) -> Result<F::Output, ProviderError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ProviderError::Cancelled),
        result = tokio::time::timeout(idle, future) => {
            result.map_err(|_| ProviderError::Stalled(idle))
        }
    }
}

#[cfg(test)]
#[path = "collect_tests.rs"]
mod tests;
