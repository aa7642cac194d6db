//! The run's signal listener: SIGINT/SIGTERM stop the run, and the steps after the agent
//! hear of it, until the run has written its last file.

use crate::agent::{StopCause, StopSignal};

/// The run's signal listener, alive until the run has written its last file.
pub(crate) struct Signals {
    pub task: tokio::task::JoinHandle<()>,
    /// Cancelled by the first SIGINT or SIGTERM (never by the time limit): the steps after
    /// the agent (artifacts, uploads) give up at once when it is.
    pub interrupt: tokio_util::sync::CancellationToken,
}

/// Stop the run on SIGINT or SIGTERM, and say so to the steps after the agent: a CI
/// runner's cancel (SIGINT, then SIGTERM 7.5 s later, then SIGKILL 2.5 s after that) is
/// answered in every phase, with result.json written. The handlers are installed now, not
/// when the task first runs: a lone run on the one-thread runtime may not yield before its
/// first tool call starts, and a signal in between would kill the process with the default
/// action (no result.json, nothing flushed).
pub(crate) fn listen_for_signals(stop: StopSignal) -> Signals {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = tokio_util::sync::CancellationToken::new();
    let told = interrupt.clone();
    let streams = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    );
    let task = tokio::spawn(async move {
        let (Ok(mut int), Ok(mut term)) = streams else {
            return;
        };
        loop {
            let got = tokio::select! {
                got = int.recv() => got,
                got = term.recv() => got,
            };
            if got.is_none() {
                return;
            }
            stop.stop(StopCause::Interrupted);
            told.cancel();
        }
    });
    Signals { task, interrupt }
}
