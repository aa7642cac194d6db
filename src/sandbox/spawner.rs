//! A thread of cn-run's own that starts processes in namespaces other than cn-run's: a
//! child process starts in the namespaces of the thread that forks it, so a thread that has
//! joined the run's namespaces (`run_net`, `entry`) starts every command of the run there,
//! without `unsafe` code between `fork` and `exec`. bubblewrap's `--die-with-parent`
//! follows the thread that started it, which lives as long as its [`Spawner`].

use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};

use super::error::{SandboxError, os};

/// Work for the thread.
type Job = Box<dyn FnOnce() + Send>;

/// The thread and the way to give it work.
#[derive(Debug)]
pub(crate) struct Spawner {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl Spawner {
    /// Start a thread named `name` (it inherits the calling thread's namespaces) that runs
    /// `setup` first; the thread serves [`Spawner::run`] only when `setup` succeeds.
    pub(crate) fn start<R: Send + 'static>(
        name: &str,
        setup: impl FnOnce() -> Result<R, SandboxError> + Send + 'static,
    ) -> Result<(Spawner, R), SandboxError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let done = setup();
                let ok = done.is_ok();
                let _ = ready_tx.send(done);
                if ok {
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                }
            })
            .map_err(os(format!("cannot start the thread {name}")))?;
        let value = ready_rx
            .recv()
            .map_err(|_| SandboxError::ThreadEnded(name.to_owned()))??;
        Ok((
            Spawner {
                jobs: Mutex::new(tx),
            },
            value,
        ))
    }

    /// Run `f` on the thread (so what it forks starts in the thread's namespaces).
    pub(crate) fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> std::io::Result<R> {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let gone = || std::io::Error::other("the sandbox's namespace thread has ended");
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())
    }
}
