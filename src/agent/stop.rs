//! Why a run is being stopped from outside the loop: the wall-clock limit, a signal, or
//! the run's own files that can no longer be written.
//!
//! One cancellation token reaches every model request and tool; the cause is recorded
//! first, so the loop can tell a timeout (exit 4) from an interrupt (exit 130) and from an
//! environment error (exit 6).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCause {
    Timeout,
    Interrupted,
    /// The run cannot keep its records (a tool call's start could not be written): it
    /// stops before running what it cannot record. The words say which file and why.
    Environment(String),
}

/// Shared stop switch of one run.
#[derive(Debug, Clone, Default)]
pub struct StopSignal {
    token: CancellationToken,
    cause: Arc<Mutex<Option<StopCause>>>,
    /// When the armed time limit ends the run (a retry wait past it is not waited).
    deadline: Arc<Mutex<Option<Instant>>>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Stop the run for `cause`; the first cause wins.
    pub fn stop(&self, cause: StopCause) {
        let mut c = self.cause.lock().unwrap_or_else(PoisonError::into_inner);
        if c.is_none() {
            *c = Some(cause);
        }
        drop(c);
        self.token.cancel();
    }

    pub fn cause(&self) -> Option<StopCause> {
        self.cause
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn is_stopped(&self) -> bool {
        self.token.is_cancelled()
    }

    /// When the armed time limit ends the run, if one is armed.
    pub fn deadline(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stop with [`StopCause::Timeout`] after `limit` (a background timer).
    pub fn arm_timeout(&self, limit: Duration) {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner) =
            Instant::now().checked_add(limit);
        let me = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(limit) => me.stop(StopCause::Timeout),
                _ = me.token.cancelled() => {}
            }
        });
    }
}
