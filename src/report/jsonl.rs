//! events.jsonl and `--format stream-json`: one redacted JSON object per line, written and
//! flushed as it happens, so a killed run still leaves every event before the kill.
//! events.jsonl goes through the run's [`AppendLog`]: a write that fails is cut back and its
//! lines go out with the next event once there is room, and a `tool.started` that cannot be
//! written is said ([`Unrecorded`]) so the call does not run unrecorded.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use crate::append_log::AppendLog;
use crate::events::{Envelope, Event, EventSink};
use crate::redact::Redactor;

/// Told why a tool call's start could not be recorded (the run then stops before the call
/// runs: a resume could not know it ran).
pub type Unrecorded = Arc<dyn Fn(String) + Send + Sync>;

/// events.jsonl of a run.
pub struct EventFile {
    log: Arc<Mutex<AppendLog>>,
    redactor: Redactor,
    on_unrecorded: Unrecorded,
}

impl EventFile {
    pub(crate) fn new(
        log: Arc<Mutex<AppendLog>>,
        redactor: Redactor,
        on_unrecorded: Unrecorded,
    ) -> Self {
        EventFile {
            log,
            redactor,
            on_unrecorded,
        }
    }
}

impl EventSink for EventFile {
    fn on_event(&mut self, envelope: &Envelope) {
        let mut text = line(envelope, &self.redactor);
        text.push('\n');
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        if log.append(text.as_bytes()) {
            return;
        }
        if let Event::ToolStarted { call_id, tool, .. } = &envelope.event {
            let why = log.health().error.unwrap_or_default();
            drop(log);
            (self.on_unrecorded)(format!(
                "cannot record the start of tool call {call_id} ({tool}) in events.jsonl: {why}; the call was not run"
            ));
        }
    }
}

/// Writes each event as one line to `out` (a file, or stdout for stream-json).
pub struct JsonlSink<W: Write + Send> {
    out: W,
    redactor: Redactor,
    failed: bool,
}

impl<W: Write + Send> JsonlSink<W> {
    pub fn new(out: W, redactor: Redactor) -> Self {
        JsonlSink {
            out,
            redactor,
            failed: false,
        }
    }
}

/// One event as its JSONL line (no newline), secrets masked.
pub fn line(envelope: &Envelope, redactor: &Redactor) -> String {
    let text = serde_json::to_string(envelope).unwrap_or_else(|e| {
        format!("{{\"type\":\"warning\",\"message\":\"event not serialisable: {e}\"}}")
    });
    redactor.redact(&text).into_owned()
}

impl<W: Write + Send> EventSink for JsonlSink<W> {
    fn on_event(&mut self, envelope: &Envelope) {
        if self.failed {
            return;
        }
        let mut text = line(envelope, &self.redactor);
        text.push('\n');
        if let Err(e) = self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
        {
            // A closed stdout (`| head`) must not end the run; say it once.
            tracing::warn!("cannot write events: {e}");
            self.failed = true;
        }
    }
}

/// `--format stream-json` on stdout: the same lines as events.jsonl.
pub type StreamJsonSink = JsonlSink<std::io::Stdout>;
