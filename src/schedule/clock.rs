//! Where the scheduler's time comes from: the system clock, or a fake one that tests move by
//! hand, so a week of schedule runs in milliseconds.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::watch;

/// The scheduler's clock.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
    /// Wait until the clock reads `t` or later.
    fn sleep_until(&self, t: Timestamp) -> impl Future<Output = ()> + Send;
}

/// The system clock. Sleeps are capped at 30 s and the loop asks again, so a wall-clock jump
/// (suspend, NTP step) is noticed within that time.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    async fn sleep_until(&self, t: Timestamp) {
        let wait = t.duration_since(Timestamp::now());
        let wait = Duration::try_from(wait).unwrap_or(Duration::ZERO);
        tokio::time::sleep(wait.min(Duration::from_secs(30))).await;
    }
}

/// A clock that only moves when told to. `next_sleep` lets a test wait until the scheduler
/// loop is asleep and learn when it wants to wake up.
#[derive(Debug, Clone)]
pub struct FakeClock {
    now: Arc<watch::Sender<Timestamp>>,
    /// Generation and target of the latest `sleep_until` call.
    sleep: Arc<watch::Sender<(u64, Option<Timestamp>)>>,
    seen: Arc<AtomicU64>,
}

impl FakeClock {
    pub fn new(start: Timestamp) -> FakeClock {
        FakeClock {
            now: Arc::new(watch::Sender::new(start)),
            sleep: Arc::new(watch::Sender::new((0, None))),
            seen: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Move the clock to `t` (never backwards).
    pub fn set(&self, t: Timestamp) {
        self.now.send_if_modified(|now| {
            let moved = t > *now;
            if moved {
                *now = t;
            }
            moved
        });
    }

    /// Move the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.set(super::later(self.now(), d));
    }

    /// Wait until a sleep that started after the previous call to `next_sleep` is going, and
    /// return the time it waits for.
    pub async fn next_sleep(&self) -> Timestamp {
        let seen = self.seen.load(Ordering::SeqCst);
        let mut rx = self.sleep.subscribe();
        let found = rx
            .wait_for(|(generation, target)| *generation > seen && target.is_some())
            .await
            .map(|v| *v);
        match found {
            Ok((generation, Some(t))) => {
                self.seen.store(generation, Ordering::SeqCst);
                t
            }
            _ => self.now(),
        }
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Timestamp {
        *self.now.borrow()
    }

    async fn sleep_until(&self, t: Timestamp) {
        self.sleep.send_modify(|(generation, target)| {
            *generation += 1;
            *target = Some(t);
        });
        let mut rx = self.now.subscribe();
        let _ = rx.wait_for(|now| *now >= t).await;
        self.sleep.send_modify(|(_, target)| *target = None);
    }
}
