//! The session log kept as the run goes: every message the history gains, the calls that
//! start, each tool result as it finishes, the counters after each response and turn,
//! checkpoints, and the end — each appended as it happens (see `session::Recorder`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::agent::{AgentHooks, RunState};
use crate::conversation::Message;
use crate::events::{Emitter, now};
use crate::redact::Redactor;
use crate::session::{Item, Progress, Recorder, SESSION_FILE, Session};

pub(crate) struct SessionHooks {
    pub path: PathBuf,
    recorder: Option<Mutex<Recorder>>,
    emitter: Arc<Emitter>,
    /// Snapshots after each mutating tool call.
    checkpoints: Option<Arc<super::checkpoints::Checkpoints>>,
}

impl SessionHooks {
    /// Open the session log in `out_dir` for a run starting from `state` (a new run, or a
    /// resumed one when `resumed`), and log what it starts with. A log that cannot be
    /// written is a warning: the run goes on.
    pub(crate) fn start(
        out_dir: &Path,
        session: &Session,
        state: &RunState,
        resumed: bool,
        redactor: &Redactor,
        emitter: &Arc<Emitter>,
        checkpoints: Option<Arc<super::checkpoints::Checkpoints>>,
    ) -> SessionHooks {
        let path = out_dir.join(SESSION_FILE);
        let recorder = match Recorder::open(&path, session, &state.history, resumed, redactor) {
            Ok(r) => Some(Mutex::new(r)),
            Err(e) => {
                tracing::warn!("cannot write the session log {}: {e}", path.display());
                None
            }
        };
        let hooks = SessionHooks {
            path,
            recorder,
            emitter: emitter.clone(),
            checkpoints,
        };
        hooks.sync(state, Vec::new());
        hooks
    }

    /// Log the run's resolved configuration (a JSON value, redacted like every line).
    pub(crate) fn record_config(&self, value: serde_json::Value) {
        self.with(|r| r.item(&Item::Config { value }));
    }

    fn with(&self, f: impl FnOnce(&mut Recorder)) {
        if let Some(m) = &self.recorder {
            f(&mut m.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }

    fn progress(&self, state: &RunState) -> Progress {
        Progress {
            turns: state.budget.turns,
            usage: state.budget.usage,
            cost_usd: state.budget.cost_usd,
            last_seq: self.emitter.seq(),
        }
    }

    /// Log what the history gained, then `after`.
    fn sync(&self, state: &RunState, after: Vec<Item>) {
        let progress = self.progress(state);
        self.with(|r| r.sync(&state.history, progress, after));
    }

    /// Log the counters after what the history gained.
    fn sync_progress(&self, state: &RunState) {
        let progress = self.progress(state);
        let item = Item::Progress {
            at: now(),
            progress,
        };
        self.with(|r| r.sync(&state.history, progress, vec![item]));
    }

    fn log_checkpoints(&self) {
        if let Some(c) = &self.checkpoints {
            let list = c.list();
            self.with(|r| r.checkpoints(&list));
        }
    }

    /// The last lines: the run has ended with `status`.
    pub(crate) async fn finish(&self, state: &RunState, status: &str, checklist: Option<String>) {
        self.log_checkpoints();
        let item = Item::Finished {
            at: now(),
            status: status.to_owned(),
            checklist,
            progress: self.progress(state),
        };
        self.sync(state, vec![item]);
    }
}

#[async_trait::async_trait]
impl AgentHooks for SessionHooks {
    async fn after_response(&self, turn: u32, state: &RunState) {
        self.sync_progress(state);
        super::fault::point("after_response", turn);
    }

    fn changes_coming(&self) {
        if let Some(c) = &self.checkpoints {
            c.begin();
        }
    }

    async fn before_changes(&self) {
        if self.checkpoints.as_ref().is_some_and(|c| c.ready()) {
            self.log_checkpoints();
        }
    }

    /// The calls are in flight on disk before any runs (a kill then reports each as
    /// interrupted rather than running it again).
    async fn tools_starting(&self, _turn: u32, call_ids: &[String]) {
        let item = Item::ToolsStarted {
            call_ids: call_ids.to_vec(),
        };
        self.with(|r| r.item(&item));
    }

    fn tool_answered(&self, _turn: u32, result: &Message) {
        self.with(|r| r.tool_result(result));
    }

    async fn tool_finished(&self, turn: u32, result: &Message) {
        self.with(|r| r.tool_result(result));
        super::fault::point("tool_finished", turn);
    }

    async fn after_mutation(&self, turn: u32, call_id: &str, tool: &str, args: &serde_json::Value) {
        if let Some(c) = &self.checkpoints {
            c.after_call(turn, call_id, tool, args);
        }
    }

    async fn after_turn(&self, turn: u32, state: &RunState) {
        self.sync_progress(state);
        super::fault::point("after_turn", turn);
    }
}
