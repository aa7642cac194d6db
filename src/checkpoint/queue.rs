//! Checkpoints taken off the caller's path, in order, on one worker thread.
//!
//! A tool call hands its checkpoint to the queue and returns: the model's next request
//! does not wait for it. Whatever must see the snapshot finished — the next call that
//! may change files, a rollback, the end of the run — calls [`Queue::settle`], which
//! waits for every checkpoint handed in so far and gives their results in the order they
//! were handed in, so the events that report them keep that order.

use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::{Checkpoint, CheckpointError, Checkpointer, GitCheckpointer};

/// A checkpoint's outcome, with what the caller tagged it with.
pub type Settled<T> = (T, Result<Option<Checkpoint>, CheckpointError>);

struct Job<T> {
    tag: T,
    label: String,
    /// The files the call changed, when it names them all (Write, Edit); `None`: scan.
    touched: Option<Vec<PathBuf>>,
}

/// Results not yet collected, and how many jobs are still to run.
struct Shared<T> {
    state: Mutex<(Vec<Settled<T>>, usize)>,
    changed: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, (Vec<Settled<T>>, usize)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The worker thread and its inbox.
pub struct Queue<T: Send + 'static> {
    inbox: Mutex<Option<Sender<Job<T>>>>,
    shared: Arc<Shared<T>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    git: Arc<GitCheckpointer>,
}

impl<T: Send + 'static> Queue<T> {
    /// Starts the worker for `git`. When no thread can be started, checkpoints are taken
    /// on the caller's thread instead.
    pub fn new(git: Arc<GitCheckpointer>) -> Queue<T> {
        let shared = Arc::new(Shared {
            state: Mutex::new((Vec::new(), 0)),
            changed: Condvar::new(),
        });
        let (tx, rx) = channel::<Job<T>>();
        let (worker_git, worker_shared) = (git.clone(), shared.clone());
        let worker = std::thread::Builder::new()
            .name("cn-run-checkpoint".into())
            .spawn(move || {
                for job in rx {
                    let result = take(&worker_git, &job);
                    let mut state = worker_shared.lock();
                    state.0.push((job.tag, result));
                    state.1 -= 1;
                    worker_shared.changed.notify_all();
                }
            })
            .ok();
        let inbox = worker.as_ref().map(|_| tx);
        Queue {
            inbox: Mutex::new(inbox),
            shared,
            worker: Mutex::new(worker),
            git,
        }
    }

    /// The checkpointer the queue works for.
    pub fn git(&self) -> &GitCheckpointer {
        &self.git
    }

    /// Hands in a checkpoint labelled `label`: of `touched` only when given, else of
    /// whatever the scan finds changed. Returns at once.
    pub fn submit(&self, tag: T, label: String, touched: Option<Vec<PathBuf>>) {
        let job = Job {
            tag,
            label,
            touched,
        };
        let inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        self.shared.lock().1 += 1;
        let unsent = match inbox.as_ref() {
            Some(tx) => tx.send(job).err().map(|e| e.0),
            None => Some(job),
        };
        drop(inbox);
        if let Some(job) = unsent {
            let result = take(&self.git, &job);
            let mut state = self.shared.lock();
            state.0.push((job.tag, result));
            state.1 -= 1;
        }
    }

    /// Waits for every checkpoint handed in so far; their outcomes, oldest first.
    pub fn settle(&self) -> Vec<Settled<T>> {
        let mut state = self.shared.lock();
        while state.1 > 0 {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        std::mem::take(&mut state.0)
    }
}

impl<T: Send + 'static> Drop for Queue<T> {
    /// Lets the worker finish what it was handed (it may be writing to `.git`).
    fn drop(&mut self) {
        self.inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let worker = self
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
    }
}

/// Takes one checkpoint; a panic in it is reported as a failed checkpoint, so that
/// [`Queue::settle`] never waits for a job that will not finish.
fn take<T>(git: &GitCheckpointer, job: &Job<T>) -> Result<Option<Checkpoint>, CheckpointError> {
    let started = std::time::Instant::now();
    let run = || match &job.touched {
        Some(paths) => git.checkpoint_paths(&job.label, paths),
        None => git.checkpoint(&job.label),
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err(CheckpointError::Failed("it panicked".into())));
    let what = if job.touched.is_some() {
        "paths"
    } else {
        "scan"
    };
    super::timing(what, started);
    result
}
