//! One line of session.jsonl: a conversation item or a change of the run's state.
//!
//! The log is only ever appended to; reading it back folds the lines in order into a
//! [`Session`](super::Session). Each line is one JSON object whose first key is `type`.

use serde::{Deserialize, Serialize};

use super::JobRecord;
use crate::conversation::{Message, Usage};

/// The counters that change every turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// Events written so far (a resumed run continues the numbering).
    pub last_seq: u64,
}

/// One line of the session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    /// The first line: which run this is and how to rebuild its job.
    Meta {
        schema_version: u32,
        session_id: String,
        job: Box<JobRecord>,
        workspace: String,
        created_at: String,
    },
    /// The run's resolved configuration (redacted like every line); the last one wins.
    Config { value: serde_json::Value },
    /// A message appended to the history (model response, tool result, user message).
    Message { message: Message },
    /// These tool calls are about to run; each stays in flight until its result is logged.
    ToolsStarted { call_ids: Vec<String> },
    /// The counters at the end of a response or a turn.
    Progress {
        at: String,
        #[serde(flatten)]
        progress: Progress,
    },
    /// A checkpoint of the workspace was taken.
    Checkpoint { value: serde_json::Value },
    /// The history was rewritten (compaction, pruning, a resume of an old session file):
    /// the whole history from here on. A reader starts from the last one.
    Snapshot {
        history: Vec<Message>,
        in_flight: Vec<String>,
        #[serde(flatten)]
        progress: Progress,
    },
    /// A later process continues the run.
    Resumed { at: String },
    /// The run ended.
    Finished {
        at: String,
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checklist: Option<String>,
        #[serde(flatten)]
        progress: Progress,
    },
}

/// How a snapshot line begins (the reader finds the last one without parsing the others).
pub(super) const SNAPSHOT_PREFIX: &str = "{\"type\":\"snapshot\"";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_line_starts_with_the_prefix_the_reader_looks_for() {
        let line = serde_json::to_string(&Item::Snapshot {
            history: vec![Message::user("x")],
            in_flight: Vec::new(),
            progress: Progress::default(),
        })
        .unwrap();
        assert!(line.starts_with(SNAPSHOT_PREFIX), "{line}");
        let back: Item = serde_json::from_str(&line).unwrap();
        assert!(matches!(back, Item::Snapshot { .. }));
    }

    #[test]
    fn a_progress_line_round_trips() {
        let item = Item::Progress {
            at: "t".into(),
            progress: Progress {
                turns: 3,
                cost_usd: Some(0.5),
                last_seq: 9,
                ..Progress::default()
            },
        };
        let line = serde_json::to_string(&item).unwrap();
        assert_eq!(serde_json::from_str::<Item>(&line).unwrap(), item);
    }
}
