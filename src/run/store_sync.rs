//! The run store wired into a run: the folder copied into the store while the run goes
//! (the growing files every second, with the diff up to the last checkpoint) and whole
//! once the run has written its last file. A store that cannot be reached is a warning
//! event while the run goes and a line on stderr after it; the local folder is whole
//! either way.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::checkpoints::Checkpoints;
use crate::events::{Emitter, Event};
use crate::redact::Redactor;
use crate::store::{DiffSource, RunStore, StoreHandle, StoreSync};

/// Start copying the run folder, if the run has a store.
pub(crate) fn start(
    url: Option<&str>,
    run_id: &str,
    out_dir: &Path,
    checkpoints: Option<Arc<Checkpoints>>,
    redactor: &Redactor,
    emitter: &Arc<Emitter>,
) -> Option<StoreHandle> {
    let url = url?;
    let store = match RunStore::open(url) {
        Ok(s) => s,
        Err(e) => {
            emitter.emit(Event::Warning {
                message: format!("the run store is off: {e}"),
            });
            return None;
        }
    };
    let diff: Option<DiffSource> = checkpoints.map(|c| {
        let source: DiffSource = Arc::new(move || c.checkpointed_diff());
        source
    });
    let sync = StoreSync::new(store, run_id, out_dir, redactor.clone(), diff);
    let target = sync.target();
    let em = emitter.clone();
    let on_change = move |s: &crate::store::StoreStatus| {
        let message = match (&s.last_error, s.ok) {
            (_, true) => format!("the run store {target} is reachable again"),
            (Some(e), false) => {
                format!(
                    "cannot copy the run to the store {target} ({e}); retrying every second, the local folder is whole"
                )
            }
            (None, false) => format!("cannot copy the run to the store {target}; retrying"),
        };
        em.emit(Event::Warning { message });
    };
    Some(sync.spawn(on_change))
}

/// How long the final copy may go on once a signal has come (a CI runner's SIGKILL
/// follows its SIGINT by 10 s, Kubernetes' by its 30 s grace period).
const AFTER_SIGNAL: std::time::Duration = std::time::Duration::from_secs(5);

/// The final copy of the whole folder (bounded in time, and to [`AFTER_SIGNAL`] once
/// `interrupt` is cancelled), after its last file; a failure is said on stderr (the run's
/// events are closed by then).
pub(crate) async fn finish(handle: Option<StoreHandle>, interrupt: &CancellationToken) {
    let Some(handle) = handle else {
        return;
    };
    let target = handle.target();
    let copy = handle.finish();
    tokio::pin!(copy);
    let status = tokio::select! {
        status = &mut copy => Some(status),
        () = interrupt.cancelled() => tokio::time::timeout(AFTER_SIGNAL, copy).await.ok(),
    };
    match status {
        Some(s) if s.ok => tracing::info!("run folder copied to {target}"),
        Some(s) => {
            let why = s.last_error.unwrap_or_default();
            tracing::warn!(
                "the run folder is not whole in the store {target}: {why}; it is whole locally"
            );
        }
        None => tracing::warn!(
            "the run folder is not whole in the store {target}: its last copy did not finish within {} s of a signal; it is whole locally",
            AFTER_SIGNAL.as_secs()
        ),
    }
}
