//! Typed readers of a run's files, so a test names fields the compiler checks instead of
//! indexing untyped JSON: [`Run::typed_events`] reads events.jsonl into the crate's own
//! [`Envelope`]s (an event the crate does not know, or a field of the wrong type, fails
//! the read), and [`Run::typed_result`] reads the fields of result.json tests ask about
//! most into [`ResultFile`], with the crate's types for status, limit and usage.

use cn_run::conversation::Usage;
use cn_run::events::{Envelope, Event};
use cn_run::exit_code::{Limit, Status};
use serde::Deserialize;

use super::runner::Run;

/// result.json's outcome and counters (its other fields stay in [`Run::result`]).
#[derive(Debug, Clone, Deserialize)]
pub struct ResultFile {
    pub status: Status,
    pub exit_code: i32,
    pub subtype: String,
    pub is_error: bool,
    pub reason: String,
    pub limit: Option<Limit>,
    pub result: String,
    pub agent_finished: bool,
    pub run_id: String,
    pub job: String,
    pub num_turns: u32,
    pub num_tool_calls: u32,
    pub attempts: u32,
    pub usage: Usage,
    pub total_cost_usd: Option<f64>,
    pub cost_unknown: bool,
    pub warnings: Vec<String>,
}

impl Run {
    fn out_file(&self, name: &str) -> String {
        let path = self.out.as_ref().expect("run had no --out").join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{self:#?}", path.display()))
    }

    /// result.json, typed.
    pub fn typed_result(&self) -> ResultFile {
        let text = self.out_file("result.json");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("result.json: {e}\n{text}"))
    }

    /// events.jsonl, each line an [`Envelope`].
    pub fn typed_events(&self) -> Vec<Envelope> {
        self.out_file("events.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// The events of the main agent (not a subagent's), without their envelopes.
    pub fn main_events(&self) -> Vec<Event> {
        self.typed_events()
            .into_iter()
            .filter(|e| e.parent_call_id.is_none())
            .map(|e| e.event)
            .collect()
    }
}
