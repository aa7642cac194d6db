//! `cn-run schedule`: start jobs on their cron, in the foreground, like a small cron daemon
//! that knows cn-run's jobs.
//!
//! The core ([`Scheduler`]) is a pure state machine: it is handed the time and a
//! [`Launcher`], decides which jobs are due, applies the missed-run policy, refuses overlap and
//! reaps runs stuck past their timeout. Time comes from a [`Clock`] (the system's, or a
//! [`FakeClock`] in tests), runs are child processes (`cn-run --quiet --format json JOB.yaml`
//! in their own process group, see [`ProcessLauncher`]), and [`driver::run`] is the loop that
//! ties them together and stops gracefully on SIGTERM.
//!
//! On disk, under the state folder (default `<DIR>/.cn-run/schedule/`): `state.json` (what
//! survives a restart: the last occurrence handled per job, the last result, a run in flight),
//! `heartbeat.json` (rewritten on every wake-up, at least every 30 s: time, pid, jobs, next
//! runs, running runs, last results, recent events) and `logs/` (each run's stdout+stderr).

mod clock;
mod discover;
pub mod driver;
mod engine;
mod launch;
mod runs;
mod state;

pub use clock::{Clock, FakeClock, SystemClock};
pub use discover::{Discovered, discover};
pub use engine::{Config, Entry, Scheduler};
pub use launch::{Launcher, ProcessLauncher, RunExit, RunHandle, Started};
pub use state::{
    Event, EventKind, Heartbeat, HeartbeatJob, InFlight, JobState, PersistedState, RunRecord, Store,
};

/// What can go wrong around the scheduler (not inside a run: a run's failure is its result).
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("{0}")]
    Jobs(String),
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a scheduler state file: {message} (move it away to start afresh)")]
    State {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("another `cn-run schedule` (pid {pid}) is using {dir}")]
    Busy { pid: u32, dir: std::path::PathBuf },
    /// A flag's duration cannot be read (`--default-timeout soon`).
    #[error("{flag}: {source}")]
    Flag {
        flag: &'static str,
        source: crate::job::ValueError,
    },
    /// A run could not be started (its log folder, or the process).
    #[error("cannot {what} {path}: {source}")]
    Start {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

impl ScheduleError {
    /// The outcome class of this failure (its exit code comes from `Status::exit_code`):
    /// the jobs, the flags, a folder named that is not there or a scheduler already using
    /// the state folder are the command line's (exit 2); a state folder that cannot be read
    /// or written, a state file that is not one, a run that cannot be started are the
    /// environment's (exit 6).
    pub fn status(&self) -> crate::exit_code::Status {
        use crate::exit_code::Status;
        match self {
            ScheduleError::Jobs(_) | ScheduleError::Flag { .. } | ScheduleError::Busy { .. } => {
                Status::Invalid
            }
            ScheduleError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Status::Invalid
            }
            ScheduleError::Io { .. }
            | ScheduleError::State { .. }
            | ScheduleError::Start { .. } => Status::InternalError,
        }
    }
}

/// `t + d`, saturating at the end of time.
pub(crate) fn later(t: jiff::Timestamp, d: std::time::Duration) -> jiff::Timestamp {
    let d = jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
    t.saturating_add(d).unwrap_or(jiff::Timestamp::MAX)
}

/// `t - d`, saturating at the start of time.
pub(crate) fn earlier(t: jiff::Timestamp, d: std::time::Duration) -> jiff::Timestamp {
    let d = jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
    t.saturating_sub(d).unwrap_or(jiff::Timestamp::MIN)
}
