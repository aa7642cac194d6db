//! The per-job steps of a scheduler tick: start what is due (applying the missed-run policy
//! and refusing overlap), collect runs that ended, reap runs stuck past their timeout.

use jiff::Timestamp;

use super::engine::{Running, Scheduler};
use super::later;
use super::launch::{Launcher, RunExit};
use super::state::{EventKind, InFlight, RunRecord, status_of};
use crate::job::{CronTab, Missed};

/// The latest occurrence in `[first, now]` and how many there are (counting stops at a cap).
fn occurrences(tab: &CronTab, first: Timestamp, now: Timestamp) -> (Timestamp, usize) {
    const CAP: usize = 10_000;
    let (mut latest, mut count) = (first, 1);
    while count < CAP {
        match tab.next_after(latest).map(|z| z.timestamp()) {
            Some(n) if n <= now => {
                latest = n;
                count += 1;
            }
            _ => return (latest, count),
        }
    }
    let latest = tab.last_at_or_before(now).map_or(latest, |z| z.timestamp());
    (latest, count)
}

impl Scheduler {
    pub(super) fn due(&mut self, i: usize, now: Timestamp, launcher: &mut dyn Launcher) {
        let slot = &mut self.slots[i];
        let Some(first) = slot.next_due.filter(|t| *t <= now) else {
            return;
        };
        let (latest, count) = occurrences(&slot.entry.tab, first, now);
        slot.last_due = Some(latest);
        slot.next_due = slot.entry.tab.next_after(now).map(|z| z.timestamp());
        let on_time = now.duration_since(latest)
            <= jiff::SignedDuration::try_from(self.cfg.late_grace).unwrap_or_default();
        let missed = if on_time { count - 1 } else { count };
        let policy = slot.entry.schedule.missed;
        if missed > 0 {
            let (kind, what) = match (policy, on_time) {
                (Missed::Skip, _) => (EventKind::MissedSkipped, "skipped (missed: skip)"),
                (Missed::RunOnce, false) => (
                    EventKind::MissedRunOnce,
                    "running once now (missed: run-once)",
                ),
                (Missed::RunOnce, true) => (EventKind::MissedRunOnce, "covered by the run due now"),
            };
            let n = if missed >= 10_000 {
                "10000+".to_owned()
            } else {
                missed.to_string()
            };
            self.record(
                now,
                i,
                kind,
                format!("{n} run(s) missed since {first}: {what}"),
            );
        }
        if on_time {
            self.start(i, now, latest, "on_time", launcher);
        } else if policy == Missed::RunOnce {
            self.start(i, now, latest, "missed_run_once", launcher);
        }
    }

    pub(super) fn start(
        &mut self,
        i: usize,
        now: Timestamp,
        at: Timestamp,
        reason: &'static str,
        launcher: &mut dyn Launcher,
    ) {
        if let Some(r) = &self.slots[i].running {
            let msg = format!(
                "the run for {at} is not started: the run started at {} is still going",
                r.info.started_at
            );
            self.record(now, i, EventKind::SkippedOverlap, msg);
            return;
        }
        let timeout = self.slots[i]
            .entry
            .timeout
            .unwrap_or(self.cfg.default_timeout);
        match launcher.start(&self.slots[i].entry, now) {
            Ok(started) => {
                let info = InFlight {
                    pid: started.handle.pid(),
                    scheduled_for: at,
                    started_at: now,
                    deadline: later(later(now, timeout), self.cfg.reap_grace),
                    log: started.log,
                };
                let pid = info.pid.map_or_else(|| "?".to_owned(), |p| p.to_string());
                self.slots[i].running = Some(Running {
                    handle: started.handle,
                    info,
                    reason,
                    terminated_at: None,
                    killed: false,
                    reaped: false,
                });
                self.record(
                    now,
                    i,
                    EventKind::Started,
                    format!("started the run for {at} (pid {pid}, {reason})"),
                );
            }
            Err(e) => self.start_failed(i, now, at, reason, &e.to_string()),
        }
    }

    fn start_failed(&mut self, i: usize, now: Timestamp, at: Timestamp, reason: &str, e: &str) {
        self.finished
            .push(crate::exit_code::Status::InternalError.exit_code());
        self.slots[i].last_result = Some(RunRecord {
            scheduled_for: at,
            started_at: now,
            finished_at: Some(now),
            exit_code: None,
            status: "start_failed".to_owned(),
            reason: reason.to_owned(),
            log: None,
            pid: None,
        });
        let msg = format!("cannot start the run for {at}: {e}");
        self.record(now, i, EventKind::StartFailed, msg);
    }

    pub(super) fn poll(&mut self, i: usize, now: Timestamp) {
        let Some(r) = self.slots[i].running.as_mut() else {
            return;
        };
        let Some(exit) = r.handle.try_wait() else {
            return;
        };
        let Some(r) = self.slots[i].running.take() else {
            return;
        };
        let (status, code) = outcome(&r, exit);
        self.finished.push(code);
        self.slots[i].last_result = Some(RunRecord {
            scheduled_for: r.info.scheduled_for,
            started_at: r.info.started_at,
            finished_at: Some(now),
            exit_code: exit.code,
            status: status.clone(),
            reason: r.reason.to_owned(),
            log: r.info.log.clone(),
            pid: r.info.pid,
        });
        let code_text = exit
            .code
            .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
        self.record(
            now,
            i,
            EventKind::Finished,
            format!(
                "the run for {} ended: {status} ({code_text})",
                r.info.scheduled_for
            ),
        );
    }

    pub(super) fn reap(&mut self, i: usize, now: Timestamp) {
        let kill_after = self.cfg.kill_after;
        let Some(r) = self.slots[i].running.as_mut() else {
            return;
        };
        if r.terminated_at.is_none() && now >= r.info.deadline {
            r.handle.terminate();
            r.terminated_at = Some(now);
            r.reaped = true;
            let msg = format!(
                "the run started at {} is past its timeout and grace: SIGTERM",
                r.info.started_at
            );
            self.record(now, i, EventKind::Reaped, msg);
        } else if let Some(t) = r.terminated_at
            && !r.killed
            && now >= later(t, kill_after)
        {
            r.handle.kill();
            r.killed = true;
            let msg = format!(
                "the run started at {} did not stop after SIGTERM: SIGKILL",
                r.info.started_at
            );
            self.record(now, i, EventKind::Killed, msg);
        }
    }
}

/// The status name and exit code to count for an ended run.
fn outcome(r: &Running, exit: RunExit) -> (String, i32) {
    let limit = crate::exit_code::Status::LimitReached.exit_code();
    let internal = crate::exit_code::Status::InternalError.exit_code();
    match exit.code {
        _ if r.reaped && exit.code.is_none_or(|c| c != 0) => ("reaped".to_owned(), limit),
        Some(c) => (status_of(c).to_owned(), c),
        None if exit.signal.is_some() => ("killed".to_owned(), internal),
        None => ("unknown".to_owned(), internal),
    }
}
