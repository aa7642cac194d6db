//! The scheduler loop: tick, save state and heartbeat, sleep until the next thing to do, and
//! on a stop request (SIGTERM/SIGINT, turned into a count by the caller) stop starting runs,
//! SIGTERM the running ones, wait for them (at most `stop_timeout`), then SIGKILL what is
//! left. The first stop request ends with exit 0; a second one kills at once and ends with
//! 130. With `once`, the loop starts what is due at its first look, waits for those runs and
//! returns the worst of their exit codes.

use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::watch;

use super::clock::Clock;
use super::engine::Scheduler;
use super::later;
use super::launch::Launcher;
use super::state::{Heartbeat, Store, status_for};
use crate::exit_code::Status;

/// How the loop behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Start what is due now, wait for it, and return.
    pub once: bool,
    /// How long a stop waits for runs before SIGKILL.
    pub stop_timeout: Duration,
    /// The pid written to the heartbeat.
    pub pid: u32,
    /// How many next run times the heartbeat lists per job.
    pub next_runs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            once: false,
            stop_timeout: Duration::from_secs(60),
            pid: std::process::id(),
            next_runs: 3,
        }
    }
}

/// Run the scheduler until a stop request (or, with `once`, until the due runs end).
/// `stop` counts stop requests: 0 keep going, 1 stop gracefully, 2 or more stop now.
pub async fn run<C: Clock>(
    sched: &mut Scheduler,
    clock: &C,
    launcher: &mut dyn Launcher,
    store: &Store,
    mut stop: watch::Receiver<u32>,
    opts: &Options,
) -> i32 {
    let started_at = clock.now();
    let beat = |sched: &Scheduler, now: Timestamp, status: &str| {
        save(sched, store, now, started_at, status, opts);
    };
    let mut first = true;
    loop {
        let now = clock.now();
        sched.tick(now, launcher);
        if opts.once && first {
            sched.hold();
        }
        first = false;
        beat(sched, now, "running");
        if *stop.borrow() > 0 || (opts.once && !sched.any_running()) {
            break;
        }
        let wake = sched.next_wake(now);
        tokio::select! {
            () = clock.sleep_until(wake) => {}
            () = changed(&mut stop) => {}
        }
    }
    if *stop.borrow() == 0 {
        beat(sched, clock.now(), "stopped");
        return worst(sched.finished());
    }
    let forced = shutdown(sched, clock, launcher, &mut stop, opts, &beat).await;
    beat(sched, clock.now(), "stopped");
    if forced { 130 } else { 0 }
}

/// Stop every run; returns true when a second stop request forced it.
async fn shutdown<C: Clock>(
    sched: &mut Scheduler,
    clock: &C,
    launcher: &mut dyn Launcher,
    stop: &mut watch::Receiver<u32>,
    opts: &Options,
    beat: &impl Fn(&Scheduler, Timestamp, &str),
) -> bool {
    let now = clock.now();
    if sched.any_running() {
        tracing::info!("stopping: waiting for running jobs (SIGTERM sent)");
    }
    sched.terminate_all(now);
    let deadline = later(now, opts.stop_timeout);
    let mut killed_at: Option<Timestamp> = None;
    loop {
        let now = clock.now();
        sched.tick(now, launcher);
        beat(sched, now, "stopping");
        if !sched.any_running() {
            break;
        }
        if killed_at.is_none() && (*stop.borrow() >= 2 || now >= deadline) {
            tracing::warn!("stopping now: SIGKILL to the jobs still running");
            sched.kill_all();
            killed_at = Some(now);
            continue;
        }
        // A killed run is given a few seconds to be reaped; then the scheduler leaves.
        if killed_at.is_some_and(|t| now >= later(t, Duration::from_secs(5))) {
            break;
        }
        let wake = sched.next_wake(now).min(deadline.max(now));
        tokio::select! {
            () = clock.sleep_until(wake) => {}
            () = changed(stop) => {}
        }
    }
    *stop.borrow() >= 2
}

async fn changed(stop: &mut watch::Receiver<u32>) {
    if stop.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn save(
    sched: &Scheduler,
    store: &Store,
    now: Timestamp,
    started_at: Timestamp,
    status: &str,
    opts: &Options,
) {
    let beat = Heartbeat {
        schema_version: 1,
        time: now,
        pid: opts.pid,
        started_at,
        status: status.to_owned(),
        jobs: sched.jobs(now, opts.next_runs),
        events: sched.events().rev().take(20).rev().cloned().collect(),
    };
    let saved = store
        .save(&sched.snapshot())
        .and_then(|()| store.save_heartbeat(&beat));
    if let Err(e) = saved {
        tracing::error!("{e}");
    }
}

/// The exit code of the worst run (0 when none ran).
fn worst(codes: &[i32]) -> i32 {
    let internal = Status::InternalError;
    codes
        .iter()
        .map(|&c| (status_for(c).unwrap_or(internal).severity(), c))
        .max()
        .map_or(0, |(_, c)| c)
}
