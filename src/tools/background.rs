//! Background jobs: commands Bash starts with `run_in_background` (a dev server, a long
//! build) that keep running while the agent works, checked with CheckBackgroundJob.
//!
//! At most [`MAX_BACKGROUND_JOBS`] run at once. Each job runs like a Bash call (`bash -c`,
//! the run's environment, the workspace as cwd, its own process group) and keeps the last
//! 1,000 lines of its merged stdout and stderr, so memory stays bounded however much it
//! prints. When the shell exits, whatever it left in its group is killed; when the run ends,
//! [`BackgroundJobs::kill_all`] kills every group and waits, so no process outlives the run.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::ToolError;
use super::process::{shell_command, signal_group};
use crate::sandbox::SandboxPolicy;

/// How many background jobs may run at the same time.
pub const MAX_BACKGROUND_JOBS: usize = 5;
/// Lines of output each job keeps (the most recent ones).
const KEEP_LINES: usize = 1_000;
/// Bytes kept of one output line.
const MAX_LINE_BYTES: usize = 4_096;

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    /// Exited with code 0.
    Completed,
    /// Exited with another code.
    Failed,
    /// Killed: by the end of the run, or by a signal.
    Killed,
}

/// A job as CheckBackgroundJob reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSnapshot {
    pub job_id: String,
    pub status: JobStatus,
    pub command: String,
    /// The kept output (the last lines).
    pub output: String,
    /// Lines printed before the kept ones and not kept.
    #[serde(skip)]
    pub dropped_lines: u64,
    pub started_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The job's process (and process group) id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

#[derive(Debug)]
struct JobState {
    status: JobStatus,
    lines: VecDeque<Vec<u8>>,
    dropped_lines: u64,
    ended: Option<(jiff::Timestamp, Instant)>,
    exit_code: Option<i32>,
}

#[derive(Debug)]
struct Job {
    id: String,
    command: String,
    pid: Option<u32>,
    started: (jiff::Timestamp, Instant),
    state: Mutex<JobState>,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl Job {
    fn state(&self) -> std::sync::MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push_line(&self, mut line: Vec<u8>) {
        if line.len() > MAX_LINE_BYTES {
            line.truncate(MAX_LINE_BYTES);
            line.extend_from_slice(" [line cut]".as_bytes());
        }
        let mut st = self.state();
        st.lines.push_back(line);
        if st.lines.len() > KEEP_LINES {
            st.lines.pop_front();
            st.dropped_lines += 1;
        }
    }

    fn snapshot(&self) -> JobSnapshot {
        let st = self.state();
        let mut output = String::new();
        for line in &st.lines {
            output.push_str(&String::from_utf8_lossy(line));
            output.push('\n');
        }
        JobSnapshot {
            job_id: self.id.clone(),
            status: st.status,
            command: self.command.clone(),
            output,
            dropped_lines: st.dropped_lines,
            started_at: self.started.0.to_string(),
            ended_at: st.ended.map(|(t, _)| t.to_string()),
            duration_seconds: st.ended.map(|(_, i)| (i - self.started.1).as_secs_f64()),
            exit_code: st.exit_code,
            pid: self.pid,
        }
    }
}

/// The run's background jobs.
#[derive(Debug, Default)]
pub struct BackgroundJobs {
    inner: Mutex<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    next: u64,
    jobs: Vec<Arc<Job>>,
}

impl BackgroundJobs {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start `command` in the background; returns the new job's id and pid. Refused when
    /// [`MAX_BACKGROUND_JOBS`] are running. Must be called inside a tokio runtime.
    pub(crate) fn start(
        &self,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
        cancel: &CancellationToken,
        sandbox: &SandboxPolicy,
    ) -> Result<(String, Option<u32>), ToolError> {
        let mut reg = self.registry();
        let running: Vec<String> = reg
            .jobs
            .iter()
            .filter(|j| j.state().status == JobStatus::Running)
            .map(|j| j.id.clone())
            .collect();
        if running.len() >= MAX_BACKGROUND_JOBS {
            return Err(ToolError::RespondToModel(format!(
                "Cannot start another background job: {MAX_BACKGROUND_JOBS} are already running ({}). \
                 Wait for one to finish (check with CheckBackgroundJob) or run this command in the foreground.",
                running.join(", ")
            )));
        }
        let mut child = sandbox
            .spawn(shell_command(command, cwd, env, sandbox))
            .map_err(|e| super::bash::spawn_error(command, &e))?;
        reg.next += 1;
        let job = Arc::new(Job {
            id: format!("bg-{}", reg.next),
            command: command.to_owned(),
            pid: child.id(),
            started: (jiff::Timestamp::now(), Instant::now()),
            state: Mutex::new(JobState {
                status: JobStatus::Running,
                lines: VecDeque::new(),
                dropped_lines: 0,
                ended: None,
                exit_code: None,
            }),
            supervisor: Mutex::new(None),
        });
        let pumps = [
            tokio::spawn(pump(child.stdout.take(), Arc::clone(&job))),
            tokio::spawn(pump(child.stderr.take(), Arc::clone(&job))),
        ];
        let handle = tokio::spawn(supervise(Arc::clone(&job), child, pumps, cancel.clone()));
        *job.supervisor
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(handle);
        reg.jobs.push(Arc::clone(&job));
        Ok((job.id.clone(), job.pid))
    }

    /// Jobs an earlier process of the run started (`(id, command, when)`, a resume): their
    /// ids stay taken, and CheckBackgroundJob reports each as ended with that process.
    pub fn restore(&self, earlier: &[(String, String, Option<jiff::Timestamp>)]) {
        let mut reg = self.registry();
        for (id, command, at) in earlier {
            if reg.jobs.iter().any(|j| &j.id == id) {
                continue;
            }
            let n = id.strip_prefix("bg-").and_then(|n| n.parse().ok());
            reg.next = reg.next.max(n.unwrap_or(0));
            let note = b"[started by an earlier cn-run process of this run; it ended when that \
                process stopped, before the run was resumed. Its output was not kept.]";
            reg.jobs.push(Arc::new(Job {
                id: id.clone(),
                command: command.clone(),
                pid: None,
                started: (at.unwrap_or_else(jiff::Timestamp::now), Instant::now()),
                state: Mutex::new(JobState {
                    status: JobStatus::Killed,
                    lines: VecDeque::from([note.to_vec()]),
                    dropped_lines: 0,
                    ended: None,
                    exit_code: None,
                }),
                supervisor: Mutex::new(None),
            }));
        }
    }

    /// The job `id`, as it stands now.
    pub fn snapshot(&self, id: &str) -> Option<JobSnapshot> {
        let job = self.registry().jobs.iter().find(|j| j.id == id).cloned();
        job.map(|j| j.snapshot())
    }

    /// Every job of the run, oldest first.
    pub fn list(&self) -> Vec<JobSnapshot> {
        let jobs = self.registry().jobs.clone();
        jobs.iter().map(|j| j.snapshot()).collect()
    }

    /// Stop every running job and wait (up to 5 s each) until they are reaped: SIGTERM to
    /// each group first (in the run's one sandbox the job's supervisor then kills what the
    /// job started outside its group), SIGKILL to what is left a moment later. Call when
    /// the run ends; safe to call more than once.
    pub async fn kill_all(&self) {
        let jobs = self.registry().jobs.clone();
        let running: Vec<&Arc<Job>> = jobs
            .iter()
            .filter(|j| j.state().status == JobStatus::Running)
            .collect();
        for job in &running {
            signal_group(job.pid, rustix::process::Signal::TERM);
        }
        if !running.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        for job in &running {
            kill_group(job.pid);
        }
        for job in &jobs {
            let handle = job
                .supervisor
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(handle) = handle {
                let _ = tokio::time::timeout(Duration::from_secs(5), handle).await;
            }
        }
    }
}

impl Drop for BackgroundJobs {
    /// A last resort when `kill_all` was not awaited: no job's group outlives the registry.
    fn drop(&mut self) {
        for job in &self.registry().jobs {
            if job.state().status == JobStatus::Running {
                kill_group(job.pid);
            }
        }
    }
}

/// SIGKILL the process group led by `pid` (each job is spawned as a group leader).
fn kill_group(pid: Option<u32>) {
    signal_group(pid, rustix::process::Signal::KILL);
}

/// Copy one output stream into the job's kept lines until it closes.
async fn pump<R: AsyncRead + Unpin>(reader: Option<R>, job: Arc<Job>) {
    let Some(mut reader) = reader else {
        return;
    };
    let mut buf = vec![0u8; 16 * 1024];
    let mut partial = Vec::new();
    while let Ok(n @ 1..) = reader.read(&mut buf).await {
        let mut rest = &buf[..n];
        while let Some(pos) = memchr::memchr(b'\n', rest) {
            partial.extend_from_slice(&rest[..pos]);
            job.push_line(std::mem::take(&mut partial));
            rest = &rest[pos + 1..];
        }
        // A line without an end yet: keep a bounded start of it.
        let room = (MAX_LINE_BYTES + 1).saturating_sub(partial.len());
        partial.extend_from_slice(&rest[..rest.len().min(room)]);
    }
    if !partial.is_empty() {
        job.push_line(partial);
    }
}

/// Wait for the shell, kill what it left behind, drain the pumps, record how it ended.
async fn supervise(
    job: Arc<Job>,
    mut child: Child,
    pumps: [JoinHandle<()>; 2],
    cancel: CancellationToken,
) {
    let mut status = tokio::select! {
        st = child.wait() => st.ok(),
        _ = cancel.cancelled() => None,
    };
    if status.is_none() {
        // Stopped by the model or the run: SIGTERM first, so the job's supervisor (in the
        // run's one sandbox) kills what the job started outside its group.
        signal_group(job.pid, rustix::process::Signal::TERM);
        status = tokio::time::timeout(Duration::from_millis(500), child.wait())
            .await
            .ok()
            .and_then(|st| st.ok());
    }
    kill_group(job.pid);
    let status = if let Some(st) = status {
        Some(st)
    } else {
        let _ = child.start_kill();
        child.wait().await.ok()
    };
    for pump in pumps {
        let _ = tokio::time::timeout(Duration::from_secs(2), pump).await;
    }
    let mut st = job.state();
    let code = status.and_then(|s| s.code());
    st.exit_code = code;
    st.status = match code {
        Some(0) => JobStatus::Completed,
        Some(_) => JobStatus::Failed,
        None => JobStatus::Killed,
    };
    st.ended = Some((jiff::Timestamp::now(), Instant::now()));
}
