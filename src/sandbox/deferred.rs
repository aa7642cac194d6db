//! A run's containment made on a thread of its own while the rest of the run starts
//! (issue 38): setting the sandbox up (the run's cgroup, its namespaces, the holder and a
//! probe through it: a bubblewrap start and a supervisor) is not on the path to the
//! first model request. The first command waits for it ([`Deferred::get`]); a run that
//! starts no command never waits, and when it ends the thread is told to stop at its next
//! step and removes what it made; the run's end does not wait for that (see the `Drop`:
//! the holder's guard ends what the thread could not). Whoever is told it is ready
//! (the app, which makes `sandbox.established` of it) is told only once the run is
//! announced ([`Deferred::announced`]), however early something first gets it: the run's
//! events open with `run.started`.

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

/// Told once, when the sandbox is got and the run announced (the app makes events of it).
pub type OnReady = Box<dyn FnOnce(&Established) + Send>;

/// Who is told the sandbox is ready, held until the run is announced.
struct Tell {
    what: Option<OnReady>,
    announced: bool,
}

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
    on_ready: Mutex<Tell>,
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
            on_ready: Mutex::new(Tell {
                what: None,
                announced: true,
            }),
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
        let (cell, thread) = if let Ok(handle) = thread {
            (OnceLock::new(), Some(handle))
        } else {
            let (policy, probe) = super::establish(asked.clone());
            (OnceLock::from(Established::of(policy, probe)), None)
        };
        Deferred(Arc::new(Inner {
            cell,
            thread: Mutex::new(thread),
            stop,
            on_ready: Mutex::new(Tell {
                what: Some(on_ready),
                announced: false,
            }),
            pending,
            asked,
        }))
    }

    /// The established sandbox; waits for the thread the first time.
    pub fn get(&self) -> &Established {
        let inner = &self.0;
        let established = inner.cell.get_or_init(|| {
            let waited = std::time::Instant::now();
            let joined = inner.join();
            let us = waited.elapsed().as_micros() as u64;
            tracing::debug!(what = "waited", us, "sandbox-timing");
            joined
        });
        inner.tell();
        established
    }

    /// The run has been announced: whoever waits to hear the sandbox is ready may be told
    /// now (at once, if something got it earlier).
    pub fn announced(&self) {
        self.0.lock_tell().announced = true;
        self.0.tell();
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
    fn lock_tell(&self) -> std::sync::MutexGuard<'_, Tell> {
        self.on_ready.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells `on_ready` once: when the sandbox is established and the run announced
    /// (outside the lock, so what it does may get the sandbox again).
    fn tell(&self) {
        let told = {
            let mut t = self.lock_tell();
            match self.cell.get() {
                Some(established) if t.announced => t.what.take().map(|f| (f, established)),
                _ => None,
            }
        };
        if let Some((tell, established)) = told {
            tell(established);
        }
    }

    /// The thread's outcome; should it have stopped or panicked, the policy as asked is
    /// established here instead (commands never run with less than it finds).
    fn join(&self) -> Established {
        if let Some(Ok(Some(established))) = self.take_thread().map(JoinHandle::join) {
            established
        } else {
            let (policy, probe) = super::establish(self.asked.clone());
            Established::of(policy, probe)
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
    /// The run is over: a set-up still going stops at its next step and removes what it
    /// made on its own thread; the run's end does not wait for it (a run that started no
    /// command ended within milliseconds while the holder's bubblewrap was still starting,
    /// issue 38). Should the process end first, the holder's guard ([`super::guard`]) kills
    /// what is left of the holder, a bubblewrap still starting too, and removes the run's
    /// cgroup folders; folders made before the guard started are removed by the next run.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.take_thread()
            && thread.is_finished()
        {
            drop(thread.join());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sandbox set up on its thread whose readiness is recorded in `told`.
    fn recorded() -> (Deferred, Arc<Mutex<Vec<String>>>) {
        let told = Arc::new(Mutex::new(Vec::new()));
        let t = told.clone();
        let d = Deferred::start(
            SandboxPolicy::off(),
            Box::new(move |e| t.lock().unwrap().push(e.status.mechanism.to_string())),
        );
        (d, told)
    }

    #[test]
    fn an_early_get_is_told_only_once_the_run_is_announced() {
        let (d, told) = recorded();
        d.get();
        assert!(d.now().is_some());
        assert!(
            told.lock().unwrap().is_empty(),
            "told before the run started"
        );
        d.announced();
        assert_eq!(told.lock().unwrap().len(), 1);
        d.get();
        d.announced();
        assert_eq!(told.lock().unwrap().len(), 1, "told once");
    }

    #[test]
    fn a_get_after_the_announcement_is_told_at_once() {
        let (d, told) = recorded();
        d.announced();
        assert!(told.lock().unwrap().is_empty(), "nothing got it yet");
        d.get();
        assert_eq!(told.lock().unwrap().len(), 1);
    }
}
