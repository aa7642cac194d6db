//! session.jsonl as a fold of the event stream: which event becomes which line.
//!
//! The session sink applies this as the run goes, and replaying a run's events.jsonl
//! through it gives the same lines — everything after the header the log opens with (the
//! meta line, and the snapshot of an older session file a resume converts). Events of a
//! nested agent (`parent_call_id`) are its own conversation, not this one: they only move
//! the counters, which every `turn.completed` then states exactly.

use super::item::{Item, Progress};
use crate::checkpoint::Checkpoint;
use crate::events::{self, Envelope, Event};

/// The counters between two events that state them, and the lines each event makes.
#[derive(Debug, Clone, Default)]
pub struct EventFold {
    progress: Progress,
    /// The counters of the last line that carries them: where a resumed run's budget
    /// starts again (what a killed run counted after that line is not in its session).
    written: Progress,
}

impl EventFold {
    /// A fold continuing from `progress` (a new run's budget, or a resumed run's).
    pub fn new(progress: Progress) -> EventFold {
        EventFold {
            progress,
            written: progress,
        }
    }

    /// Starts the counters again from `progress` (the log was opened after `seq` events).
    pub fn restart(&mut self, progress: Progress) {
        let seq = self.progress.last_seq;
        self.progress = progress;
        self.progress.last_seq = self.progress.last_seq.max(seq);
        self.written = self.progress;
    }

    /// The lines `env` adds to the session log (often none).
    pub fn items(&mut self, env: &Envelope) -> Vec<Item> {
        let items = self.fold(env);
        if let Some(p) = items.iter().rev().find_map(carried) {
            self.written = p;
        }
        items
    }

    fn fold(&mut self, env: &Envelope) -> Vec<Item> {
        self.progress.last_seq = env.seq;
        if env.parent_call_id.is_some() {
            return Vec::new();
        }
        let at = || env.ts.clone();
        match &env.event {
            Event::RunStarted { resumed: true, .. } => {
                self.progress = Progress {
                    last_seq: env.seq,
                    ..self.written
                };
                vec![Item::Resumed { at: at() }]
            }
            Event::TurnStarted { turn } => {
                self.progress.turns = *turn;
                Vec::new()
            }
            Event::AssistantMessage {
                usage, cost_usd, ..
            } => {
                self.record(usage.unwrap_or_default(), *cost_usd);
                Vec::new()
            }
            Event::MessageAppended { message } => self.message(message, at()),
            Event::HistoryReplaced { history } => vec![Item::Snapshot {
                history: history.clone(),
                in_flight: Vec::new(),
                progress: self.progress,
            }],
            Event::ToolStarted { call_id, .. } => vec![Item::ToolsStarted {
                call_ids: vec![call_id.clone()],
            }],
            Event::TurnCompleted {
                num_turns,
                usage,
                total_cost_usd,
                ..
            } => {
                self.set(*num_turns, *usage, *total_cost_usd);
                vec![Item::Progress {
                    at: at(),
                    progress: self.progress,
                }]
            }
            Event::CheckpointCreated { .. } => checkpoint(&env.event).into_iter().collect(),
            Event::ConfigResolved { config } => vec![Item::Config {
                value: serde_json::to_value(config).unwrap_or_default(),
            }],
            Event::SessionFinished {
                status,
                checklist,
                num_turns,
                usage,
                total_cost_usd,
            } => {
                self.set(*num_turns, *usage, *total_cost_usd);
                vec![Item::Finished {
                    at: at(),
                    status: status.as_str().to_owned(),
                    checklist: checklist.clone(),
                    progress: self.progress,
                }]
            }
            // Not part of the session: what a resume starts from is the conversation and
            // the counters above.
            events::ignored!(
                call_details, notes, result_records;
                RunStarted, ModelRetry, ToolFinished, Warning, RunCompleted
            ) => Vec::new(),
        }
    }

    /// A message line; after a response with tool calls, the counters too (its usage is
    /// kept if the process dies while the calls run).
    fn message(&mut self, message: &crate::conversation::Message, at: String) -> Vec<Item> {
        let calls = matches!(message, crate::conversation::Message::Assistant { tool_calls, .. } if !tool_calls.is_empty());
        let mut items = vec![Item::Message {
            message: message.clone(),
        }];
        if calls {
            items.push(Item::Progress {
                at,
                progress: self.progress,
            });
        }
        items
    }

    /// One response's usage and cost (a cost not known makes the total not known).
    fn record(&mut self, usage: crate::conversation::Usage, cost: Option<f64>) {
        self.progress.usage.add(&usage);
        self.progress.cost_usd = crate::context::pricing::add_cost(self.progress.cost_usd, cost);
    }

    fn set(&mut self, turns: u32, usage: crate::conversation::Usage, cost: Option<f64>) {
        self.progress.turns = turns;
        self.progress.usage = usage;
        self.progress.cost_usd = cost;
    }
}

/// The counters a line carries, if it carries them.
fn carried(item: &Item) -> Option<Progress> {
    match item {
        Item::Progress { progress, .. }
        | Item::Snapshot { progress, .. }
        | Item::Finished { progress, .. } => Some(*progress),
        _ => None,
    }
}

/// A `checkpoint.created` event as the session keeps it (as result.json lists it).
fn checkpoint(event: &Event) -> Option<Item> {
    let Event::CheckpointCreated {
        index,
        reference,
        commit,
        label,
        files_changed,
        skipped,
        ..
    } = event
    else {
        return None;
    };
    let checkpoint = Checkpoint {
        index: *index,
        reference: reference.clone(),
        commit: commit.clone(),
        label: label.clone(),
        files_changed: *files_changed,
        skipped: skipped.clone(),
    };
    let value = serde_json::to_value(checkpoint).ok()?;
    Some(Item::Checkpoint { value })
}

/// The lines a whole events file folds into (a replay; the header aside).
pub fn replay(events: &[Envelope]) -> Vec<Item> {
    let mut fold = EventFold::new(Progress {
        cost_usd: Some(0.0),
        ..Progress::default()
    });
    events.iter().flat_map(|e| fold.items(e)).collect()
}
