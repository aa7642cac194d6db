//! The session log as a sink of the event stream: attached with the run's other outputs,
//! it folds each event into lines ([`EventFold`]) and appends them once the log is open
//! (what comes before — a start checkpoint — waits, in order, for the log). A tool call's
//! start that cannot be written is said (`on_unrecorded`): the run stops before the call.

use std::sync::{Arc, Mutex, PoisonError};

use super::fold::EventFold;
use super::item::{Item, Progress};
use super::recorder::Recorder;
use crate::events::{Envelope, EventSink};

#[derive(Default)]
struct Inner {
    fold: EventFold,
    /// `None` until the log is opened, and when it could not be.
    recorder: Option<Recorder>,
    opened: bool,
    /// Lines folded before the log was opened.
    pending: Vec<Item>,
    on_unrecorded: Option<crate::report::jsonl::Unrecorded>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("recorder", &self.recorder)
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

/// A handle on the run's session sink: one goes to the emitter, the run keeps another to
/// open the log.
#[derive(Debug, Clone, Default)]
pub struct SessionSink(Arc<Mutex<Inner>>);

impl SessionSink {
    pub fn new() -> SessionSink {
        SessionSink::default()
    }

    /// From now on lines go to `recorder` (`None`: the log could not be opened, and the
    /// run goes on without one); `progress` is the run's counters as it starts.
    pub fn open(&self, recorder: Option<Recorder>, progress: Progress) {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        inner.fold.restart(progress);
        inner.opened = true;
        inner.recorder = recorder;
        let pending = std::mem::take(&mut inner.pending);
        if let Some(r) = inner.recorder.as_mut() {
            r.write(&pending);
        }
    }

    /// Who is told when a tool call's start cannot be written.
    pub fn on_unrecorded(&self, tell: crate::report::jsonl::Unrecorded) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .on_unrecorded = Some(tell);
    }

    /// Writes the lines still waiting for room; true when none wait (or there is no log).
    pub fn flush(&self) -> bool {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        inner.recorder.as_mut().is_none_or(Recorder::flush)
    }

    /// Syncs session.jsonl to disk.
    pub fn sync(&self) {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = inner.recorder.as_mut() {
            r.sync();
        }
    }

    /// What did not reach session.jsonl (None without a log).
    pub fn health(&self) -> Option<crate::append_log::Health> {
        let inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        inner.recorder.as_ref().map(Recorder::health)
    }
}

impl EventSink for SessionSink {
    fn on_event(&mut self, envelope: &Envelope) {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let items = inner.fold.items(envelope);
        if items.is_empty() {
            return;
        }
        let written = match (inner.opened, inner.recorder.as_mut()) {
            (true, Some(r)) => r.write(&items),
            (true, None) => true,
            (false, _) => {
                inner.pending.extend(items.iter().cloned());
                true
            }
        };
        let started = items.iter().find_map(|i| match i {
            Item::ToolsStarted { call_ids } => call_ids.first().cloned(),
            _ => None,
        });
        if let (false, Some(call_id), Some(tell)) = (written, started, &inner.on_unrecorded) {
            let why = inner
                .recorder
                .as_ref()
                .and_then(|r| r.health().error)
                .unwrap_or_default();
            tell(format!(
                "cannot record the start of tool call {call_id} in session.jsonl: {why}; the call was not run"
            ));
        }
    }
}
