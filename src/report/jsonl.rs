//! events.jsonl and `--format stream-json`: one redacted JSON object per line, written and
//! flushed as it happens, so a killed run still leaves every event before the kill.

use std::io::Write;

use crate::events::{Envelope, EventSink};
use crate::redact::Redactor;

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
