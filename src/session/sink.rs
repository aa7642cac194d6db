//! The session log as a sink of the event stream: attached with the run's other outputs,
//! it folds each event into lines ([`EventFold`]) and appends them once the log is open
//! (what comes before — a start checkpoint — waits, in order, for the log).

use std::sync::{Arc, Mutex, PoisonError};

use super::fold::EventFold;
use super::item::{Item, Progress};
use super::recorder::Recorder;
use crate::events::{Envelope, EventSink};

#[derive(Debug, Default)]
struct Inner {
    fold: EventFold,
    /// `None` until the log is opened, and when it could not be.
    recorder: Option<Recorder>,
    opened: bool,
    /// Lines folded before the log was opened.
    pending: Vec<Item>,
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
}

impl EventSink for SessionSink {
    fn on_event(&mut self, envelope: &Envelope) {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let items = inner.fold.items(envelope);
        if items.is_empty() {
            return;
        }
        match (inner.opened, inner.recorder.as_mut()) {
            (true, Some(r)) => r.write(&items),
            (true, None) => {}
            (false, _) => inner.pending.extend(items),
        }
    }
}
