//! The scheduler's core: given the time, decide what to start, skip, record or stop. No
//! clock, no sleeping and no files here; the driver calls [`Scheduler::tick`] whenever it
//! wakes up, so a test can walk through weeks of schedule with made-up times.
//!
//! Rules, per job:
//! - An occurrence is *on time* when the scheduler sees it within `Config::late_grace` (1 min)
//!   of its time; it starts then. Older ones were *missed* (the scheduler was down or asleep):
//!   `missed: skip` records them and waits for the next; `missed: run-once` starts one run now.
//! - A job is the scheduler's from its first sight (`JobState::since`, the start that first
//!   saw it less the grace, so a first start also runs an occurrence up to 1 min old): its
//!   first occurrence, if no scheduler was up for it, is missed like any other.
//! - No overlap: an occurrence that comes while the job's previous run is still going is
//!   skipped, logged and recorded as a `skipped_overlap` event.
//! - A run still going `Config::reap_grace` after its job's timeout (`limits.timeout`, else
//!   `Config::default_timeout`) gets SIGTERM, and SIGKILL `Config::kill_after` later.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;

use super::launch::{Launcher, RunHandle};
use super::state::{Event, EventKind, HeartbeatJob, InFlight, JobState, PersistedState, RunRecord};
use super::{earlier, later};
use crate::job::{CronTab, Schedule};

/// One scheduled job.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Identifies the job in the state file: its file's absolute path.
    pub key: String,
    pub name: String,
    pub file: PathBuf,
    pub schedule: Schedule,
    pub tab: CronTab,
    /// The job's own `limits.timeout`, if any.
    pub timeout: Option<Duration>,
}

/// Tunables; the defaults suit a real deployment, tests shrink them.
#[derive(Debug, Clone)]
pub struct Config {
    /// How late an occurrence may be seen and still count as on time.
    pub late_grace: Duration,
    /// Timeout of jobs without `limits.timeout`.
    pub default_timeout: Duration,
    /// Time past the timeout before a run is reaped.
    pub reap_grace: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub kill_after: Duration,
    /// How often running runs are polled.
    pub poll: Duration,
    /// The longest the driver sleeps (the heartbeat period).
    pub heartbeat_every: Duration,
    /// Events kept in the state file.
    pub events_kept: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            late_grace: Duration::from_secs(60),
            default_timeout: Duration::from_secs(6 * 3600),
            reap_grace: Duration::from_secs(300),
            kill_after: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            heartbeat_every: Duration::from_secs(30),
            events_kept: 200,
        }
    }
}

pub(super) struct Running {
    pub(super) handle: Box<dyn RunHandle>,
    pub(super) info: InFlight,
    pub(super) reason: &'static str,
    /// When SIGTERM was sent (by reaping or by a stop), and whether SIGKILL followed.
    pub(super) terminated_at: Option<Timestamp>,
    pub(super) killed: bool,
    pub(super) reaped: bool,
}

pub(super) struct Slot {
    pub(super) entry: Entry,
    pub(super) since: Timestamp,
    pub(super) next_due: Option<Timestamp>,
    pub(super) last_due: Option<Timestamp>,
    pub(super) last_result: Option<RunRecord>,
    pub(super) running: Option<Running>,
}

/// The scheduler's state machine.
pub struct Scheduler {
    pub(super) cfg: Config,
    pub(super) slots: Vec<Slot>,
    pub(super) events: VecDeque<Event>,
    /// No new runs (stopping, or `--once` after its first look).
    pub(super) hold: bool,
    /// Exit codes of the runs that ended in this process (a reaped or killed run counts as
    /// 4, a run with no exit code as 6).
    pub(super) finished: Vec<i32>,
}

impl Scheduler {
    /// Start from what an earlier scheduler saved. A job never seen before waits for its next
    /// occurrence (one in the last `late_grace` counts); a job seen before is checked for
    /// occurrences missed since it was last handled, or since it was first seen. A run left
    /// in flight is watched if still alive.
    pub fn new(
        entries: Vec<Entry>,
        saved: &PersistedState,
        now: Timestamp,
        cfg: Config,
        launcher: &mut dyn Launcher,
    ) -> Scheduler {
        let mut events: VecDeque<Event> = saved.events.iter().cloned().collect();
        let mut slots = Vec::new();
        for entry in entries {
            let old = saved.jobs.get(&entry.key).cloned().unwrap_or_default();
            let since = old.since.unwrap_or_else(|| earlier(now, cfg.late_grace));
            // After the last occurrence handled; else from `since` on, `since` included (an
            // occurrence exactly a grace old is on time, as in `due`).
            let from = old
                .last_due
                .unwrap_or_else(|| earlier(since, Duration::from_nanos(1)));
            let next_due = entry.tab.next_after(from).map(|z| z.timestamp());
            let running = old.running.and_then(|info| {
                let handle = launcher.adopt(&entry, &info)?;
                events.push_back(event(
                    now,
                    &entry.name,
                    EventKind::Adopted,
                    format!("run started at {} is still going", info.started_at),
                ));
                Some(Running {
                    handle,
                    info,
                    reason: "on_time",
                    terminated_at: None,
                    killed: false,
                    reaped: false,
                })
            });
            slots.push(Slot {
                entry,
                since,
                next_due,
                last_due: old.last_due,
                last_result: old.last_result,
                running,
            });
        }
        Scheduler {
            cfg,
            slots,
            events,
            hold: false,
            finished: Vec::new(),
        }
    }

    /// Look at every job at time `now`: collect ended runs, reap stuck ones, start due ones.
    pub fn tick(&mut self, now: Timestamp, launcher: &mut dyn Launcher) {
        for i in 0..self.slots.len() {
            self.poll(i, now);
            self.reap(i, now);
            if !self.hold {
                self.due(i, now, launcher);
            }
        }
        let excess = self.events.len().saturating_sub(self.cfg.events_kept);
        self.events.drain(..excess);
    }

    /// When the driver should call `tick` next.
    pub fn next_wake(&self, now: Timestamp) -> Timestamp {
        let mut wake = later(now, self.cfg.heartbeat_every);
        for s in &self.slots {
            if let Some(t) = s.next_due.filter(|_| !self.hold) {
                wake = wake.min(t);
            }
            if s.running.is_some() {
                wake = wake.min(later(now, self.cfg.poll));
            }
        }
        wake.max(now)
    }

    /// Start no more runs from now on.
    pub fn hold(&mut self) {
        self.hold = true;
    }

    pub fn any_running(&self) -> bool {
        self.slots.iter().any(|s| s.running.is_some())
    }

    /// SIGTERM to every run (a graceful stop); no new runs after this.
    pub fn terminate_all(&mut self, now: Timestamp) {
        self.hold = true;
        for s in &mut self.slots {
            if let Some(r) = s.running.as_mut().filter(|r| r.terminated_at.is_none()) {
                r.handle.terminate();
                r.terminated_at = Some(now);
            }
        }
    }

    /// SIGKILL to every run still going.
    pub fn kill_all(&mut self) {
        for s in &mut self.slots {
            if let Some(r) = s.running.as_mut().filter(|r| !r.killed) {
                r.handle.kill();
                r.killed = true;
            }
        }
    }

    /// Exit codes of the runs that ended since this scheduler was made.
    pub fn finished(&self) -> &[i32] {
        &self.finished
    }

    pub fn events(&self) -> impl DoubleEndedIterator<Item = &Event> + ExactSizeIterator {
        self.events.iter()
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.slots.iter().map(|s| &s.entry)
    }

    /// The next occurrence the scheduler waits for, per job (in entry order).
    pub fn next_due(&self) -> Vec<Option<Timestamp>> {
        self.slots.iter().map(|s| s.next_due).collect()
    }

    /// Each job as the heartbeat and `--list` show it, with its next `n` occurrences.
    pub fn jobs(&self, now: Timestamp, n: usize) -> Vec<HeartbeatJob> {
        self.slots
            .iter()
            .map(|s| {
                let from = s
                    .next_due
                    .map_or(now, |t| earlier(t, Duration::from_secs(1)));
                HeartbeatJob {
                    name: s.entry.name.clone(),
                    file: s.entry.file.display().to_string(),
                    cron: s.entry.schedule.cron.clone(),
                    timezone: s.entry.schedule.timezone.clone(),
                    missed: s.entry.schedule.missed,
                    next_runs: s
                        .entry
                        .tab
                        .upcoming(from, n)
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    running: s.running.as_ref().map(|r| r.info.clone()),
                    last_result: s.last_result.clone(),
                }
            })
            .collect()
    }

    /// What to save in `state.json`.
    pub fn snapshot(&self) -> PersistedState {
        PersistedState {
            version: 1,
            jobs: self
                .slots
                .iter()
                .map(|s| (s.entry.key.clone(), self.job_state(s)))
                .collect(),
            events: self.events.iter().cloned().collect(),
        }
    }

    fn job_state(&self, s: &Slot) -> JobState {
        JobState {
            since: Some(s.since),
            last_due: s.last_due,
            last_result: s.last_result.clone(),
            running: s.running.as_ref().map(|r| r.info.clone()),
        }
    }

    pub(super) fn record(&mut self, now: Timestamp, i: usize, kind: EventKind, message: String) {
        let name = &self.slots[i].entry.name;
        match kind {
            EventKind::SkippedOverlap
            | EventKind::MissedSkipped
            | EventKind::Reaped
            | EventKind::Killed
            | EventKind::StartFailed => tracing::warn!(job = %name, "{message}"),
            _ => tracing::info!(job = %name, "{message}"),
        }
        self.events.push_back(event(now, name, kind, message));
    }
}

pub(super) fn event(time: Timestamp, job: &str, kind: EventKind, message: String) -> Event {
    Event {
        time,
        job: job.to_owned(),
        kind,
        message,
    }
}
