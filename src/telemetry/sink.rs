//! The telemetry sink among a run's outputs: it hands each event, slimmed to what the fold
//! reads, to the telemetry thread over a channel and returns — no span, metric or export
//! work happens on the run's own thread, and a collector that hangs cannot hold the run.

use std::sync::mpsc::Sender;

use super::Msg;
use crate::conversation::Message;
use crate::events::{self, Envelope, Event, EventSink};

/// Bytes of a tool result the fold reads (the end, where a command's exit code is).
const RESULT_TAIL: usize = 512;

pub(super) struct TelemetrySink {
    pub(super) key: u64,
    pub(super) tx: Sender<Msg>,
}

impl EventSink for TelemetrySink {
    fn on_event(&mut self, envelope: &Envelope) {
        if let Some(event) = slim(&envelope.event) {
            let env = Envelope {
                schema_version: envelope.schema_version,
                seq: envelope.seq,
                ts: envelope.ts.clone(),
                run_id: envelope.run_id.clone(),
                parent_call_id: envelope.parent_call_id.clone(),
                event,
            };
            // A closed channel means the process is ending: nothing to do.
            let _ = self.tx.send(Msg::Event(self.key, Box::new(env)));
        }
    }
}

/// What the fold needs of `event`: the conversation's messages only as the end of a tool
/// result, and no whole histories or configurations.
fn slim(event: &Event) -> Option<Event> {
    match event {
        Event::MessageAppended {
            message:
                Message::Tool {
                    tool_call_id,
                    name,
                    content,
                    is_error,
                    ..
                },
        } => Some(Event::MessageAppended {
            message: Message::Tool {
                tool_call_id: tool_call_id.clone(),
                name: name.clone(),
                content: tail(content, RESULT_TAIL).to_owned(),
                is_error: *is_error,
                images: Vec::new(),
            },
        }),
        events::ignored!(conversation) => None,
        events::ignored!(
            turn_marks, call_details, notes, result_records;
            RunStarted, ModelRetry, AssistantMessage, ToolStarted, ToolFinished,
            CheckpointCreated, Warning, SessionFinished, RunCompleted
        ) => Some(event.clone()),
    }
}

/// The last `max` bytes of `text`, at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut at = text.len().saturating_sub(max);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}
