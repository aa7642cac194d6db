//! A run's containment made on a thread of its own while the rest of the run starts
//! (issue 38): setting the sandbox up (the run's cgroup, its namespaces, the holder and a
//! probe through it: two bubblewrap starts and a supervisor) is not on the path to the
//! first model request. The first command waits for it ([`Deferred::get`]); a run that
//! starts no command never waits, and when it ends the thread is told to stop at its next
//! step and is joined, so nothing it made outlives the run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use super::{Probe, SandboxPolicy, SandboxStatus, describe};

/// What the run's commands run under, once established.
#[derive(Debug)]
pub struct Established {
    pub policy: SandboxPolicy,
    pub probe: Probe,
    pub status: SandboxStatus,
}

impl Established {
    fn of(policy: SandboxPolicy, probe: Probe) -> Established {
        let status = describe(&probe, &policy);
        Established {
            policy,
            probe,
            status,
        }
    }
}

/// Told once, by whoever first gets the established sandbox (the app makes events of it).
pub type OnReady = Box<dyn FnOnce(&Established) + Send>;

/// The run's sandbox: established already, or being established on its own thread.
/// Clones share it.
#[derive(Clone)]
pub struct Deferred(Arc<Inner>);

struct Inner {
    cell: OnceLock<Established>,
    /// `None` from it: it stopped, not needed.
    thread: Mutex<Option<JoinHandle<Option<Established>>>>,
    /// Set when the run no longer needs the sandbox: the thread stops at its next step.
    stop: Arc<AtomicBool>,
    on_ready: Mutex<Option<OnReady>>,
    /// The record before the sandbox is established (`mechanism: pending`).
    pending: SandboxStatus,
    /// The policy as asked, established here should the thread fail.
    asked: SandboxPolicy,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("established", &self.0.cell.get())
            .finish_non_exhaustive()
    }
}

impl Deferred {
    /// A sandbox established already.
    pub fn ready(policy: SandboxPolicy, probe: Probe) -> Deferred {
        let established = Established::of(policy, probe);
        let pending = established.status.clone();
        Deferred(Arc::new(Inner {
            cell: OnceLock::from(established),
            thread: Mutex::new(None),
            stop: Arc::new(AtomicBool::new(false)),
            on_ready: Mutex::new(None),
            pending,
            asked: SandboxPolicy::off(),
        }))
    }

    /// Establish `policy` on a thread of its own; `on_ready` is told once it is got. Where
    /// no thread can be started, it is established now.
    pub fn start(policy: SandboxPolicy, on_ready: OnReady) -> Deferred {
        let pending = describe(&Probe::pending(), &policy);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let asked = policy.clone();
        let thread = std::thread::Builder::new()
            .name("cn-run-sandbox-setup".into())
            .spawn(move || {
                let (policy, probe) = super::status::establish_unless(policy, &flag)?;
                Some(Established::of(policy, probe))
            });
        let (cell, thread) = match thread {
            Ok(handle) => (OnceLock::new(), Some(handle)),
            Err(_) => {
                let (policy, probe) = super::establish(asked.clone());
                (OnceLock::from(Established::of(policy, probe)), None)
            }
        };
        Deferred(Arc::new(Inner {
            cell,
            thread: Mutex::new(thread),
            stop,
            on_ready: Mutex::new(Some(on_ready)),
            pending,
            asked,
        }))
    }

    /// The established sandbox; waits for the thread the first time.
    pub fn get(&self) -> &Established {
        let inner = &self.0;
        let established = inner.cell.get_or_init(|| inner.join());
        let told = inner
            .on_ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(tell) = told {
            tell(established);
        }
        established
    }

    /// The policy commands start under (waits as [`Self::get`]).
    pub fn policy(&self) -> &SandboxPolicy {
        &self.get().policy
    }

    /// The established sandbox if the thread has finished; never waits.
    pub fn now(&self) -> Option<&Established> {
        let finished = self
            .0
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_none_or(JoinHandle::is_finished);
        finished.then(|| self.get())
    }

    /// The record as it stands: the established one, or the pending one.
    pub fn status(&self) -> &SandboxStatus {
        match self.0.cell.get() {
            Some(e) => &e.status,
            None => &self.0.pending,
        }
    }

    /// No command will run any more: a set-up still going stops at its next step.
    pub fn not_needed(&self) {
        self.0.stop.store(true, Ordering::SeqCst);
    }
}

impl Inner {
    /// The thread's outcome; should it have stopped or panicked, the policy as asked is
    /// established here instead (commands never run with less than it finds).
    fn join(&self) -> Established {
        match self.take_thread().map(JoinHandle::join) {
            Some(Ok(Some(established))) => established,
            _ => {
                let (policy, probe) = super::establish(self.asked.clone());
                Established::of(policy, probe)
            }
        }
    }

    fn take_thread(&self) -> Option<JoinHandle<Option<Established>>> {
        self.thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl Drop for Inner {
    /// The run is over: a set-up still going stops at its next step, and what it made is
    /// removed before the process ends.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.take_thread() {
            drop(thread.join());
        }
    }
}
