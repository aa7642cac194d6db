//! Finished spans as the SDK exports them ([`SpanData`]), built from what the fold knows:
//! derived ids, real start and end times from the events, attributes and span events. Every
//! text that leaves passes [`Texts`]: the run's redactor, and a size cap.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use super::context::RunTrace;
use crate::redact::Redactor;

/// The instrumentation scope of everything cn-run exports.
pub(super) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("cn-run")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// Redaction and caps for the texts a run exports; content only when captured.
#[derive(Debug, Clone)]
pub struct Texts {
    pub redactor: Redactor,
    /// Prompts, answers, tool arguments and output are exported.
    pub capture: bool,
    /// The most bytes of one text.
    pub limit: usize,
}

impl Texts {
    /// `text` redacted and cut to the limit (with a note of what was cut).
    pub fn clean(&self, text: &str) -> String {
        let redacted = self.redactor.redact(text);
        cap(redacted, self.limit)
    }

    /// `text` as an attribute value, redacted and capped.
    pub fn value(&self, text: &str) -> Value {
        Value::String(self.clean(text).into())
    }

    /// A content attribute (`key` = `text`), only when content is captured.
    pub fn content(&self, key: &'static str, text: &str) -> Option<KeyValue> {
        self.capture.then(|| KeyValue::new(key, self.value(text)))
    }
}

/// The first `limit` bytes of `text` (at a character boundary), with a note when cut.
fn cap(text: Cow<'_, str>, limit: usize) -> String {
    if text.len() <= limit {
        return text.into_owned();
    }
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}[… {} more bytes]", &text[..at], text.len() - at)
}

/// One span as the fold describes it.
pub(super) struct SpanSpec {
    pub id: SpanId,
    /// The parent (`SpanId::INVALID` for a root span).
    pub parent: SpanId,
    /// The parent is the caller's span (`TRACEPARENT`), in another process.
    pub remote_parent: bool,
    pub name: String,
    pub kind: SpanKind,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<opentelemetry::trace::Event>,
    /// `Some(description)` for a span that ended in an error.
    pub error: Option<String>,
}

impl SpanSpec {
    /// A span with no attributes or events yet, ended without an error.
    pub(super) fn new(id: SpanId, parent: SpanId, name: String, kind: SpanKind) -> Self {
        SpanSpec {
            id,
            parent,
            remote_parent: false,
            name,
            kind,
            start: SystemTime::UNIX_EPOCH,
            end: SystemTime::UNIX_EPOCH,
            attributes: Vec::new(),
            events: Vec::new(),
            error: None,
        }
    }

    pub(super) fn at(mut self, start: SystemTime, end: SystemTime) -> Self {
        self.start = start;
        self.end = end.max(start);
        self
    }

    /// The span the SDK exports, in `trace`.
    pub(super) fn build(self, trace: &RunTrace, scope: &InstrumentationScope) -> SpanData {
        let state = trace
            .state
            .as_deref()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let status = match self.error {
            Some(description) => Status::error(description),
            None => Status::Unset,
        };
        let mut events = SpanEvents::default();
        events.events = self.events;
        SpanData {
            span_context: SpanContext::new(trace.trace_id, self.id, trace.flags, false, state),
            parent_span_id: self.parent,
            parent_span_is_remote: self.remote_parent,
            span_kind: self.kind,
            name: self.name.into(),
            start_time: self.start,
            end_time: self.end,
            attributes: self.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: scope.clone(),
        }
    }
}

/// A span event (`name` at `time`) with its attributes.
pub(super) fn event(
    name: &'static str,
    time: SystemTime,
    attributes: Vec<KeyValue>,
) -> opentelemetry::trace::Event {
    opentelemetry::trace::Event::new(name, time, attributes, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_redacted_and_capped_and_content_only_when_captured() {
        let redactor = Redactor::from_values(vec!["s3cr3t-value".to_owned()]);
        let texts = Texts {
            redactor,
            capture: false,
            limit: 10,
        };
        assert!(!texts.clean("key s3cr3t-value").contains("s3cr3t"));
        assert_eq!(texts.clean("0123456789abc"), "0123456789[… 3 more bytes]");
        assert_eq!(texts.clean("ééééééé"), "ééééé[… 4 more bytes]");
        assert!(texts.content("k", "v").is_none());
        let captured = Texts {
            capture: true,
            ..texts
        };
        assert!(captured.content("k", "v").is_some());
    }
}
