//! Starting, watching and stopping runs. A run is a child process of the scheduler:
//! `cn-run --quiet --format json JOB.yaml`, in its own process group (so a Ctrl-C at the
//! terminal reaches the scheduler only), with stdout and stderr in
//! `logs/<job>/<start time>.log` (the newest 50 per job are kept). Tests put a fake
//! [`Launcher`] in its place.
//!
//! Stopping a run: SIGTERM goes to the run's own process (cn-run stops its tools and checks
//! and writes its result, exit 130), not to its whole group: a check's sandbox launcher is in
//! that group, and a SIGTERM reaching it at the same instant killed the check under cn-run,
//! which could then see a failed check before its own signal and end `failed` (exit 1) instead
//! of `interrupted`. Once a stopped run has ended, whatever is left of its group gets SIGKILL;
//! SIGKILL (`kill`) always goes to the whole group.

use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use jiff::Timestamp;
use rustix::process::{Pid, Signal};

use super::ScheduleError;
use super::engine::Entry;
use super::state::InFlight;
use crate::safe_name::safe_word;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// A run in flight.
pub trait RunHandle: Send {
    fn pid(&self) -> Option<u32>;
    /// `Some` once the run has ended; never blocks.
    fn try_wait(&mut self) -> Option<RunExit>;
    /// Ask the run to stop (SIGTERM to its process group).
    fn terminate(&mut self);
    /// Stop it now (SIGKILL to its process group).
    fn kill(&mut self);
}

/// A run that has just started.
pub struct Started {
    pub handle: Box<dyn RunHandle>,
    pub log: Option<PathBuf>,
}

/// Starts runs of jobs.
pub trait Launcher {
    fn start(&mut self, entry: &Entry, now: Timestamp) -> Result<Started, ScheduleError>;
    /// A run of `entry` that an earlier scheduler left behind (`run`), if its process is
    /// still that run.
    fn adopt(&mut self, entry: &Entry, run: &InFlight) -> Option<Box<dyn RunHandle>>;
}

/// Runs jobs as child processes of `exe` (normally this very binary).
#[derive(Debug, Clone)]
pub struct ProcessLauncher {
    pub exe: PathBuf,
    /// The working directory of every run.
    pub cwd: PathBuf,
    /// Where each run's stdout and stderr go.
    pub log_dir: PathBuf,
}

impl Launcher for ProcessLauncher {
    fn start(&mut self, entry: &Entry, now: Timestamp) -> Result<Started, ScheduleError> {
        let failed = |what: &'static str, path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| ScheduleError::Start { what, path, source }
        };
        let dir = self.log_dir.join(safe_word(&entry.name));
        std::fs::create_dir_all(&dir).map_err(failed("create", &dir))?;
        prune_logs(&dir);
        let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
        let log_path = dir.join(format!("{stamp}.log"));
        let out = File::create(&log_path).map_err(failed("create", &log_path))?;
        let err = out.try_clone().map_err(failed("share", &log_path))?;
        let child = Command::new(&self.exe)
            .args(["--quiet", "--format", "json"])
            .arg(&entry.file)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(failed("start", &self.exe))?;
        Ok(Started {
            handle: Box::new(ChildRun {
                child,
                stopped: false,
            }),
            log: Some(log_path),
        })
    }

    /// Only when `/proc/PID/cmdline` shows this job file: a reused pid is never adopted (and
    /// so never signalled). Where there is no `/proc`, nothing is adopted.
    fn adopt(&mut self, entry: &Entry, run: &InFlight) -> Option<Box<dyn RunHandle>> {
        let pid = run.pid?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let file = entry.file.as_os_str().as_encoded_bytes();
        cmdline.split(|b| *b == 0).any(|arg| arg == file).then(|| {
            Box::new(Orphan {
                pid,
                log: run.log.clone(),
                stopped: false,
            }) as Box<dyn RunHandle>
        })
    }
}

/// Logs kept per job (the oldest go first).
const LOGS_KEPT: usize = 50;

/// Remove the oldest logs in a job's folder so that a new one makes `LOGS_KEPT`.
fn prune_logs(dir: &std::path::Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut logs: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".log"))
        })
        .collect();
    logs.sort();
    let excess = (logs.len() + 1).saturating_sub(LOGS_KEPT);
    for old in logs.into_iter().take(excess) {
        let _ = std::fs::remove_file(old);
    }
}

fn pid_of(pid: u32) -> Option<Pid> {
    Pid::from_raw(i32::try_from(pid).ok()?)
}

/// Send `sig` to the process group led by `pid`, or to the process if it leads none.
fn signal_group(pid: u32, sig: Signal) {
    if let Some(p) = pid_of(pid)
        && rustix::process::kill_process_group(p, sig).is_err()
    {
        let _ = rustix::process::kill_process(p, sig);
    }
}

/// Send `sig` to process `pid` alone.
fn signal_process(pid: u32, sig: Signal) {
    if let Some(p) = pid_of(pid) {
        let _ = rustix::process::kill_process(p, sig);
    }
}

/// A run has ended: if it was stopped, SIGKILL what is left of its group (nothing, when
/// cn-run stopped its own processes).
fn ended(pid: u32, stopped: bool, exit: RunExit) -> RunExit {
    if stopped && let Some(p) = pid_of(pid) {
        let _ = rustix::process::kill_process_group(p, Signal::KILL);
    }
    exit
}

struct ChildRun {
    child: Child,
    /// SIGTERM was sent.
    stopped: bool,
}

impl RunHandle for ChildRun {
    fn pid(&self) -> Option<u32> {
        Some(self.child.id())
    }

    fn try_wait(&mut self) -> Option<RunExit> {
        let exit = match self.child.try_wait() {
            Ok(Some(st)) => RunExit {
                code: st.code(),
                signal: st.signal(),
            },
            Ok(None) => return None,
            // Cannot wait any more (should not happen): count it as gone.
            Err(_) => RunExit {
                code: None,
                signal: None,
            },
        };
        Some(ended(self.child.id(), self.stopped, exit))
    }

    fn terminate(&mut self) {
        self.stopped = true;
        signal_process(self.child.id(), Signal::TERM);
    }

    fn kill(&mut self) {
        signal_group(self.child.id(), Signal::KILL);
    }
}

/// Whether process `pid` exists and has not ended (a zombie has ended).
fn alive(pid: u32) -> bool {
    let exists = pid_of(pid).is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    exists && !matches!(state, Some('Z' | 'X'))
}

/// A run started by an earlier scheduler process: not our child, so only its liveness can be
/// watched; its exit code is read from the result it printed into its log.
struct Orphan {
    pid: u32,
    log: Option<PathBuf>,
    stopped: bool,
}

impl RunHandle for Orphan {
    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }

    fn try_wait(&mut self) -> Option<RunExit> {
        if alive(self.pid) {
            return None;
        }
        let code = self.log.as_deref().and_then(exit_code_in_log);
        Some(ended(
            self.pid,
            self.stopped,
            RunExit { code, signal: None },
        ))
    }

    fn terminate(&mut self) {
        self.stopped = true;
        signal_process(self.pid, Signal::TERM);
    }

    fn kill(&mut self) {
        signal_group(self.pid, Signal::KILL);
    }
}

/// The exit code in the result a run printed (`--format json`: a JSON object with
/// `"type": "result"` and `"exit_code"`, the last one in the log), if it printed one.
pub(crate) fn exit_code_in_log(log: &std::path::Path) -> Option<i32> {
    let text = std::fs::read_to_string(log).ok()?;
    let starts = text
        .match_indices('{')
        .map(|(i, _)| i)
        .filter(|i| *i == 0 || text.as_bytes()[i - 1] == b'\n');
    starts
        .filter_map(|i| {
            let mut objects = serde_json::Deserializer::from_str(&text[i..]).into_iter();
            objects.next()?.ok()
        })
        .filter(|v: &serde_json::Value| v["type"] == "result")
        .filter_map(|v| v["exit_code"].as_i64())
        .next_back()
        .and_then(|c| i32::try_from(c).ok())
}
