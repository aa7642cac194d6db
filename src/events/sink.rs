//! Where events go: the [`EventSink`] trait and the [`Emitter`] that numbers events and fans
//! them out to every sink in order.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{Envelope, Event, SCHEMA_VERSION};

/// A consumer of events: a file writer, the result builder, the progress display, …
pub trait EventSink: Send {
    fn on_event(&mut self, envelope: &Envelope);
}

impl<S: EventSink + ?Sized> EventSink for Box<S> {
    fn on_event(&mut self, envelope: &Envelope) {
        (**self).on_event(envelope);
    }
}

/// A sink shared by the emitter, which feeds one handle, and the run, which reads what
/// it folded through another (a panic while one held it does not stop the other).
pub struct Shared<S: ?Sized>(Arc<Mutex<S>>);

impl<S> Shared<S> {
    pub fn new(sink: S) -> Self {
        Shared(Arc::new(Mutex::new(sink)))
    }
}

impl<S: ?Sized> Shared<S> {
    pub fn lock(&self) -> MutexGuard<'_, S> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: ?Sized> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<S: Default> Default for Shared<S> {
    fn default() -> Self {
        Shared::new(S::default())
    }
}

impl<S: EventSink + ?Sized> EventSink for Shared<S> {
    fn on_event(&mut self, envelope: &Envelope) {
        self.lock().on_event(envelope);
    }
}

struct Inner {
    seq: u64,
    sinks: Vec<Box<dyn EventSink>>,
}

/// Numbers events (`seq`), stamps them and hands each to every sink, in order.
pub struct Emitter {
    run_id: String,
    inner: Mutex<Inner>,
    /// A nested agent's emitter forwards to the run's, tagging events with the call id
    /// of the Subagent call that started it.
    forward: Option<(Arc<Emitter>, String)>,
}

impl Emitter {
    pub fn new(run_id: impl Into<String>) -> Self {
        Emitter {
            run_id: run_id.into(),
            inner: Mutex::new(Inner {
                seq: 0,
                sinks: Vec::new(),
            }),
            forward: None,
        }
    }

    /// An emitter for a nested agent: its events go to this emitter's sinks, numbered in
    /// the same sequence, with `parent_call_id` set.
    pub fn scoped(self: &Arc<Self>, parent_call_id: &str) -> Emitter {
        Emitter {
            run_id: self.run_id.clone(),
            inner: Mutex::new(Inner {
                seq: 0,
                sinks: Vec::new(),
            }),
            forward: Some((self.clone(), parent_call_id.to_owned())),
        }
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn add_sink(&self, sink: Box<dyn EventSink>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.sinks.push(sink);
    }

    /// The number of the last event emitted.
    pub fn seq(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .seq
    }

    /// Continue numbering after `seq` (a resumed run appends to its events).
    pub fn resume_at(&self, seq: u64) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.seq = seq;
    }

    pub fn emit(&self, event: Event) {
        match &self.forward {
            Some((parent, call_id)) => parent.emit_in(Some(call_id.clone()), event),
            None => self.emit_in(None, event),
        }
    }

    fn emit_in(&self, parent_call_id: Option<String>, event: Event) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.seq += 1;
        let envelope = Envelope {
            schema_version: SCHEMA_VERSION,
            seq: inner.seq,
            ts: now_rfc3339(),
            run_id: self.run_id.clone(),
            parent_call_id,
            event,
        };
        for sink in &mut inner.sinks {
            sink.on_event(&envelope);
        }
    }
}

/// The current time as RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}

/// A sink that keeps every envelope in memory (tests, and the session store).
#[derive(Clone, Default)]
pub struct MemorySink {
    events: Arc<Mutex<Vec<Envelope>>>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn events(&self) -> Vec<Envelope> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl EventSink for MemorySink {
    fn on_event(&mut self, envelope: &Envelope) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(envelope.clone());
    }
}
