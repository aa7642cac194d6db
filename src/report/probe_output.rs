//! A test-only output, added the way the README's "Add a tool, a provider or an output"
//! says (this fold and one row in `run::file_outputs::FILE_OUTPUTS`): probe-tally.json,
//! how many events the run emitted, how many tool calls started and how the run ended.

use crate::events::{self, Envelope, Event, EventSink};
use crate::run::file_outputs::FileOutput;

pub(crate) const FILE_NAME: &str = "probe-tally.json";

/// The tally so far.
#[derive(Default)]
struct Tally {
    events: u64,
    tool_calls: u64,
    status: Option<String>,
}

/// The row: every run writes the tally.
pub(crate) fn new(_: &crate::config::RunConfig) -> Option<Box<dyn FileOutput>> {
    Some(Box::new(Tally::default()))
}

impl EventSink for Tally {
    fn on_event(&mut self, envelope: &Envelope) {
        self.events += 1;
        match &envelope.event {
            Event::ToolStarted { .. } => self.tool_calls += 1,
            Event::RunCompleted { status, .. } => {
                self.status = serde_json::to_value(status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned));
            }
            // Not counted: every group, and the run's other events one by one.
            events::ignored!(
                turn_marks, call_details, notes, result_records, conversation;
                RunStarted, ModelRetry, AssistantMessage, ToolFinished, CheckpointCreated,
                Warning, SessionFinished
            ) => {}
        }
    }
}

impl FileOutput for Tally {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn render(&self) -> Option<Vec<u8>> {
        let value = serde_json::json!({
            "events": self.events,
            "tool_calls": self.tool_calls,
            "status": self.status,
        });
        serde_json::to_vec_pretty(&value).ok()
    }
}
