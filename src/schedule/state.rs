//! What the scheduler writes to disk: `state.json`, which survives restarts (the missed-run
//! policy and overlap protection need it), and `heartbeat.json`, which tells a watcher that
//! the scheduler is alive and what it is doing. Both are written atomically (temp + rename).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::ScheduleError;

/// The result of one scheduled run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The occurrence of the schedule this run was for.
    pub scheduled_for: Timestamp,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    /// The child's exit code (`None`: killed by a signal, or not ours to wait for).
    pub exit_code: Option<i32>,
    /// `success`, `failed`, … (the exit-code table), or `killed`, `reaped`, `start_failed`,
    /// `unknown`.
    pub status: String,
    /// `on_time` or `missed_run_once`.
    pub reason: String,
    /// The run's stdout and stderr.
    pub log: Option<PathBuf>,
    pub pid: Option<u32>,
}

/// A run in flight, as recorded for the next scheduler to find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    pub pid: Option<u32>,
    pub scheduled_for: Timestamp,
    pub started_at: Timestamp,
    /// When the run counts as stuck and is killed.
    pub deadline: Timestamp,
    pub log: Option<PathBuf>,
}

/// What the scheduler remembers about one job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobState {
    /// From when the job's occurrences are the scheduler's to run: the first start that saw
    /// the job, less the on-time grace. Until the job has a `last_due`, occurrences after it
    /// that no scheduler was up for count as missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// The latest occurrence that was handled (run, or skipped on purpose).
    pub last_due: Option<Timestamp>,
    pub last_result: Option<RunRecord>,
    pub running: Option<InFlight>,
}

/// Something the scheduler did or refused to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Started,
    Finished,
    /// An occurrence came while the previous run was still going; not started.
    SkippedOverlap,
    /// Occurrences were missed (scheduler down or asleep) and the policy is `skip`.
    MissedSkipped,
    /// Occurrences were missed and the policy is `run-once`: one run starts now.
    MissedRunOnce,
    /// A run went past its timeout and grace; SIGTERM sent to its process group.
    Reaped,
    /// A run did not stop after SIGTERM; SIGKILL sent.
    Killed,
    StartFailed,
    /// A run started by an earlier scheduler is still going; it is watched, not restarted.
    Adopted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub time: Timestamp,
    pub job: String,
    pub kind: EventKind,
    pub message: String,
}

/// `state.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedState {
    pub version: u32,
    /// By job key (the job file's absolute path).
    pub jobs: BTreeMap<String, JobState>,
    /// Recent events, oldest first.
    pub events: Vec<Event>,
}

/// One job in `heartbeat.json` (and in `schedule --list --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatJob {
    pub name: String,
    pub file: String,
    pub cron: String,
    pub timezone: String,
    pub missed: crate::job::Missed,
    /// Upcoming occurrences, in the job's time zone.
    pub next_runs: Vec<String>,
    pub running: Option<InFlight>,
    pub last_result: Option<RunRecord>,
}

/// `heartbeat.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub schema_version: u32,
    pub time: Timestamp,
    pub pid: u32,
    pub started_at: Timestamp,
    /// `running`, `stopping` or `stopped`.
    pub status: String,
    pub jobs: Vec<HeartbeatJob>,
    /// The latest events, oldest first.
    pub events: Vec<Event>,
}

/// The scheduler's folder: state, heartbeat and run logs.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    pub fn heartbeat_path(&self) -> PathBuf {
        self.dir.join("heartbeat.json")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// The saved state; empty when there is none yet.
    pub fn load(&self) -> Result<PersistedState, ScheduleError> {
        let path = self.state_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| ScheduleError::State {
                path,
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PersistedState::default()),
            Err(source) => Err(ScheduleError::Io {
                what: "read",
                path,
                source,
            }),
        }
    }

    /// The last heartbeat, if one is readable.
    pub fn heartbeat(&self) -> Option<Heartbeat> {
        let text = std::fs::read_to_string(self.heartbeat_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn save(&self, state: &PersistedState) -> Result<(), ScheduleError> {
        self.write_json(&self.state_path(), state)
    }

    pub fn save_heartbeat(&self, beat: &Heartbeat) -> Result<(), ScheduleError> {
        self.write_json(&self.heartbeat_path(), beat)
    }

    fn write_json(&self, path: &Path, value: &impl Serialize) -> Result<(), ScheduleError> {
        let io = |what: &'static str, source| ScheduleError::Io {
            what,
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| io("create the folder of", e))?;
        let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| io("write", e))?;
        std::fs::rename(&tmp, path).map_err(|e| io("replace", e))
    }
}

/// The status that a cn-run exit code stands for (the table in `exit_code`).
pub(crate) fn status_for(code: i32) -> Option<crate::exit_code::Status> {
    use crate::exit_code::Status;
    const ALL: [Status; 8] = [
        Status::Success,
        Status::Failed,
        Status::Invalid,
        Status::ApprovalRequired,
        Status::LimitReached,
        Status::ProviderError,
        Status::InternalError,
        Status::Interrupted,
    ];
    ALL.into_iter().find(|s| s.exit_code() == code)
}

/// The status name of a cn-run exit code, `unknown` for a code outside the table.
pub(crate) fn status_of(code: i32) -> &'static str {
    status_for(code).map_or("unknown", |s| s.as_str())
}
