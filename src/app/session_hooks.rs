//! The session file kept current as the run goes: after every response, when a tool call
//! starts and when it finishes, after every turn, and at the end.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Mutex;

use crate::agent::{AgentHooks, RunState};
use crate::conversation::Message;
use crate::events::{Emitter, now};
use crate::redact::Redactor;
use crate::session::{Session, SessionState};

pub(crate) struct SessionHooks {
    pub path: PathBuf,
    pub redactor: Redactor,
    pub session: Mutex<Session>,
    pub emitter: Arc<Emitter>,
    /// Snapshots after each mutating tool call.
    pub checkpoints: Option<Arc<super::checkpoints::Checkpoints>>,
    /// Whether anything that takes time (checks, a repair of the structured output) can
    /// come between the model's last answer and the final write.
    pub more_after_answer: bool,
    /// When the session file was last written.
    pub last_save: std::sync::Mutex<std::time::Instant>,
    /// Calls finished since the last write (taken out of `in_flight` when it is written).
    pub done: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// Shortest time between two writes for finished tool results alone.
const RESULT_SAVE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

impl SessionHooks {
    async fn save_with(&self, update: impl FnOnce(&mut Session)) {
        let mut s = self.session.lock().await;
        update(&mut s);
        self.write(&mut s);
    }

    /// Write the session (its lock held by the caller).
    fn write(&self, s: &mut Session) {
        if let Ok(mut done) = self.done.lock()
            && !done.is_empty()
        {
            s.in_flight.retain(|id| !done.contains(id));
            done.clear();
        }
        s.updated_at = now();
        s.last_seq = self.emitter.seq();
        if let Err(e) = s.save(&self.path, &self.redactor) {
            tracing::warn!("cannot write the session file {}: {e}", self.path.display());
        }
        // From the end of the write: a slow write (a long session) is not repeated at once.
        if let Ok(mut t) = self.last_save.lock() {
            *t = std::time::Instant::now();
        }
    }

    fn sync_state(s: &mut Session, state: &RunState) {
        s.history = state.history.clone();
        s.turns = state.budget.turns;
        s.usage = state.budget.usage;
        s.cost_usd = state.budget.cost_usd;
    }

    /// The final write: the run has ended with `status`.
    pub(crate) async fn finish(&self, state: &RunState, status: &str, checklist: Option<String>) {
        let checkpoints = self.checkpoints.as_ref().map(|c| c.list());
        self.save_with(|s| {
            if let Some(list) = checkpoints {
                s.checkpoints = list;
            }
            Self::sync_state(s, state);
            s.in_flight.clear();
            s.state = SessionState::Finished;
            s.status = Some(status.to_owned());
            s.checklist = checklist;
        })
        .await;
    }
}

#[async_trait::async_trait]
impl AgentHooks for SessionHooks {
    async fn after_response(&self, _turn: u32, state: &RunState) {
        self.save_with(|s| {
            Self::sync_state(s, state);
            s.in_flight.clear();
        })
        .await;
    }

    fn changes_coming(&self) {
        if let Some(c) = &self.checkpoints {
            c.begin();
        }
    }

    async fn before_changes(&self) {
        if let Some(c) = &self.checkpoints
            && c.ready()
        {
            let list = c.list();
            self.save_with(|s| s.checkpoints = list).await;
        }
    }

    /// One write marks every call of the batch in flight before any runs (a kill then
    /// reports each as interrupted rather than running it again).
    async fn tools_starting(&self, _turn: u32, call_ids: &[String]) {
        self.save_with(|s| s.in_flight.extend(call_ids.iter().cloned()))
            .await;
    }

    fn tool_answered(&self, _turn: u32, result: &Message) {
        // Kept for the next write; a write already under way leaves it to the turn's end.
        if let Ok(mut s) = self.session.try_lock() {
            s.history.push(result.clone());
        }
    }

    /// The result is saved with the next write, at most [`RESULT_SAVE_INTERVAL`] later
    /// (a write per result made a response with many calls quadratic). Until then the
    /// call is still in flight on disk, which a resume reports as interrupted: never
    /// wrong, only cautious.
    async fn tool_finished(&self, _turn: u32, result: &Message) {
        let mut s = self.session.lock().await;
        if let (Message::Tool { tool_call_id, .. }, Ok(mut done)) = (result, self.done.lock()) {
            done.insert(tool_call_id.clone());
        }
        s.history.push(result.clone());
        // Decided and written under the one lock: callers queued behind a write see it.
        let due = self
            .last_save
            .lock()
            .map(|t| t.elapsed() >= RESULT_SAVE_INTERVAL)
            .unwrap_or(true);
        if due {
            self.write(&mut s);
        }
    }

    async fn after_mutation(&self, turn: u32, call_id: &str, tool: &str, args: &serde_json::Value) {
        if let Some(c) = &self.checkpoints {
            c.after_call(turn, call_id, tool, args);
        }
    }

    /// The last answer is saved at once only when checks or a repair turn may follow;
    /// otherwise the final write comes right after and saves it (one create and rename
    /// fewer per run, each of which waits for the journal on a busy disk).
    async fn answered(&self, turn: u32, state: &RunState) {
        if self.more_after_answer {
            self.after_turn(turn, state).await;
        }
    }

    async fn after_turn(&self, _turn: u32, state: &RunState) {
        self.save_with(|s| {
            Self::sync_state(s, state);
            s.in_flight.clear();
        })
        .await;
    }
}
