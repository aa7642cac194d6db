//! The run as people and benchmarks read it: the conversation of every agent, each tool
//! call with its arguments, verdict, output and checkpoint, the turns with their tokens
//! and cost, and the run's outcome — one fold over events.jsonl ([`Transcript::of`]), read
//! by the HTML report (`report::html`) and the ATIF trajectory (`report::atif`).
//!
//! Texts are kept whole here (a tool output of 15 MB included): each reader decides what
//! it shows. The fold sees only the events, so the run (at its end) and `cn-run report`
//! (from the file) build the same transcript.

mod fold;
#[cfg(test)]
pub(crate) mod sample;
#[cfg(test)]
mod tests;

use serde_json::Value;

use super::RunResult;
use crate::checks::CheckResult;
use crate::conversation::Usage;
use crate::events::{Changes, Envelope, Resolution, ToolStatus};
use crate::permissions::{Decision, RuleView};
use crate::redact::Redactor;

pub use fold::TranscriptFold;

/// Everything the readers show, in the order it happened.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The outcome, as result.json tells it (the newest run of the file).
    pub result: RunResult,
    /// Each start of the main agent (more than one: the run was resumed).
    pub runs: Vec<RunStart>,
    /// The resolved configuration (`config.resolved`) of the newest run.
    pub config: Option<Value>,
    /// The main agent first, then each nested agent in the order it started.
    pub agents: Vec<Agent>,
    /// Every tool call of every agent, in the order the model made them.
    pub calls: Vec<Call>,
    /// The main agent's turns (the timeline).
    pub turns: Vec<Turn>,
    pub checkpoints: Vec<CheckpointMark>,
    /// What the run changed (`changes.recorded`), when it got that far.
    pub changes: Option<Changes>,
    /// MCP notifications, per server: (server, count, last message).
    pub notices: Vec<(String, usize, Option<String>)>,
    /// How many events were read, and the last one's `seq` and time.
    pub events: usize,
    pub last_seq: u64,
    pub last_ts: String,
}

/// A `run.started` of the main agent.
#[derive(Debug, Clone, Default)]
pub struct RunStart {
    pub seq: u64,
    pub ts: String,
    pub job: String,
    pub prompt: String,
    pub provider: String,
    pub model: String,
    pub workspace: String,
    pub tools: Vec<String>,
    pub mode: crate::events::Mode,
    pub resumed: bool,
    pub checks: Vec<String>,
    pub isolation: Option<crate::events::Isolation>,
    pub sandbox: Option<crate::sandbox::SandboxStatus>,
    pub policy: Vec<RuleView>,
}

/// One agent's conversation: the main agent, or a nested one working for a Subagent call.
#[derive(Debug, Clone, Default)]
pub struct Agent {
    /// The call this agent works for (`parent_call_id`); `None` for the main agent.
    pub parent: Option<String>,
    /// That call's index in [`Transcript::calls`], when it is known.
    pub call: Option<usize>,
    pub entries: Vec<Entry>,
    /// Responses, tokens and cost of this agent alone.
    pub responses: u32,
    pub usage: Usage,
    pub cost: Cost,
}

/// A sum of costs that stays unknown once one part is unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    pub usd: f64,
    pub unknown: bool,
}

impl Cost {
    pub fn add(&mut self, part: Option<f64>) {
        match part {
            Some(c) => self.usd += c,
            None => self.unknown = true,
        }
    }

    pub fn known(&self) -> Option<f64> {
        (!self.unknown).then_some(self.usd)
    }
}

/// One thing in a conversation, in order.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A start of the run ([`Transcript::runs`] index); a resumed start marks a resume.
    Run(usize),
    /// A message to the model: the task, a check's repair request, "continue", a resume's
    /// prompt.
    User {
        seq: u64,
        ts: String,
        text: String,
    },
    /// One response of the model.
    Response(Response),
    /// A turn began (the main agent's: [`Transcript::turns`] index).
    Turn(usize),
    Attempt(u32),
    Retry {
        turn: u32,
        attempt: u32,
        delay_ms: u64,
        kind: crate::events::ErrorKind,
        message: String,
    },
    Incomplete {
        turn: u32,
        stop_reason: String,
        action: crate::events::IncompleteAction,
    },
    Compaction {
        turn: u32,
        tokens_before: u64,
        tokens_after: u64,
        messages_before: usize,
        messages_after: usize,
        /// The summary that replaced the older history.
        summary: Option<String>,
    },
    Check(CheckResult),
    Validated {
        valid: bool,
        errors: Vec<String>,
    },
    Rule {
        turn: u32,
        name: String,
        reason: String,
    },
    Warning(String),
}

/// One response of a model: its words, reasoning, calls and what it cost.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub seq: u64,
    pub ts: String,
    pub turn: u32,
    pub text: String,
    pub reasoning: String,
    /// Indexes into [`Transcript::calls`].
    pub calls: Vec<usize>,
    pub usage: Option<Usage>,
    pub cost: Option<f64>,
    pub stop_reason: Option<String>,
}

/// What the policy said about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It ran; the decision that allowed it, when the events carry it.
    Allowed(Option<Decision>),
    /// A rule did not allow it outright: how `on_ask` or the rule resolved it.
    Decided {
        resolution: Resolution,
        decision: Decision,
    },
    /// Answered without a policy check (bad arguments, unknown tool, the run stopping).
    NotRun,
}

/// One tool call, from the model's request to its result.
#[derive(Debug, Clone)]
pub struct Call {
    /// The agent that made it ([`Transcript::agents`] index).
    pub agent: usize,
    /// The model's id for it.
    pub id: String,
    pub name: String,
    /// The main agent's turn row it belongs to ([`Transcript::turns`] index).
    pub turn_row: Option<usize>,
    pub turn: u32,
    /// The arguments as the model sent them (raw text), and the event that holds them.
    pub raw_arguments: String,
    pub seq: u64,
    /// The arguments as the tool or the policy read them.
    pub arguments: Option<Value>,
    pub verdict: Verdict,
    pub status: Option<ToolStatus>,
    pub duration_ms: Option<u64>,
    /// The result the model got, whole, and the event that holds it.
    pub output: Option<String>,
    pub output_seq: Option<u64>,
    pub is_error: bool,
    pub images: Vec<String>,
    /// The checkpoint taken after it ([`Transcript::checkpoints`] index).
    pub checkpoint: Option<usize>,
    /// The nested agent working for it ([`Transcript::agents`] index).
    pub subagent: Option<usize>,
}

/// A `checkpoint.created`.
#[derive(Debug, Clone)]
pub struct CheckpointMark {
    pub index: u32,
    pub turn: u32,
    pub reference: String,
    pub commit: String,
    pub label: String,
    pub files_changed: usize,
    /// The call it follows ([`Transcript::calls`] index).
    pub call: Option<usize>,
}

/// One turn of the main agent.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub number: u32,
    pub seq: u64,
    pub started: String,
    /// The last event of the turn (its `turn.completed`, or the last one seen).
    pub ended: String,
    /// Its responses' tokens and cost, nested agents' included.
    pub usage: Usage,
    pub cost: Cost,
    pub responses: u32,
    pub calls: Vec<usize>,
}

impl Transcript {
    /// The transcript of `events` (a whole events.jsonl, in order), each event masked by
    /// `redactor` first (the file's are masked already; this adds what the caller knows).
    pub fn of(events: &[Envelope], redactor: &Redactor) -> Transcript {
        let mut fold = TranscriptFold::default();
        for env in events {
            if redactor.is_empty() {
                fold.on_event(env);
            } else {
                fold.on_event(&redacted(env, redactor));
            }
        }
        fold.finish()
    }
}

/// `env` with every secret `redactor` knows masked (through its JSON text, so every
/// string of every event is covered). An event the masking made unreadable is replaced
/// by a warning saying so, never shown unmasked.
fn redacted(env: &Envelope, redactor: &Redactor) -> Envelope {
    let text = serde_json::to_string(env).ok();
    let masked = text.as_deref().map(|text| match redactor.redact(text) {
        std::borrow::Cow::Borrowed(_) => Ok(env.clone()),
        std::borrow::Cow::Owned(masked) => serde_json::from_str(&masked),
    });
    match masked {
        Some(Ok(env)) => env,
        _ => Envelope {
            event: crate::events::Event::Warning {
                message: format!(
                    "event {} ({}) is not shown: masking its secrets left it unreadable",
                    env.seq,
                    event_type(text.as_deref())
                ),
            },
            ..env.clone()
        },
    }
}

/// The `type` tag of an event's JSON text.
fn event_type(text: Option<&str>) -> String {
    text.and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| v["type"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "of unknown type".to_owned())
}
