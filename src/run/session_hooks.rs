//! The run's session log and the loop's hooks. The log is a fold of the event stream
//! (`session::SessionSink`, attached with the other outputs); here it is opened, told the
//! messages the run starts with, and closed. The hooks only drive the checkpoints (and the
//! debug-only fault points).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::{AgentHooks, RunState};
use crate::events::{Emitter, Event};
use crate::exit_code::Status;
use crate::redact::Redactor;
use crate::session::{Progress, Recorder, SESSION_FILE, Session, SessionSink};

pub(crate) struct SessionHooks {
    pub path: PathBuf,
    emitter: Arc<Emitter>,
    /// Messages of the starting history the log holds already (the rest are said at
    /// [`announce`](Self::announce)).
    logged: usize,
    /// Snapshots after each mutating tool call.
    checkpoints: Option<Arc<super::checkpoints::Checkpoints>>,
    /// The log's sink (whether every line reached the file); read by the debug builds'
    /// check of the fold only.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    sink: SessionSink,
}

/// Where the session sink starts counting: the run's budget as it starts.
fn progress(state: &RunState, emitter: &Emitter) -> Progress {
    Progress {
        turns: state.budget.turns,
        usage: state.budget.usage,
        cost_usd: state.budget.cost_usd,
        last_seq: emitter.seq(),
    }
}

impl SessionHooks {
    /// Opens the session log in `out_dir` for a run starting from `state` (a new run, or a
    /// resumed one when `resumed`) and hands it to `sink`. A log that cannot be written is
    /// a warning: the run goes on.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        out_dir: &Path,
        session: &Session,
        state: &RunState,
        resumed: bool,
        redactor: &Redactor,
        emitter: &Arc<Emitter>,
        sink: &SessionSink,
        checkpoints: Option<Arc<super::checkpoints::Checkpoints>>,
    ) -> SessionHooks {
        let path = out_dir.join(SESSION_FILE);
        let recorder = match Recorder::open(&path, session, resumed, redactor) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("cannot write the session log {}: {e}", path.display());
                None
            }
        };
        let logged = recorder.as_ref().map_or(0, |r| r.logged);
        sink.open(recorder, progress(state, emitter));
        SessionHooks {
            path,
            emitter: emitter.clone(),
            logged: logged.min(state.history.len()),
            checkpoints,
            sink: sink.clone(),
        }
    }

    /// Right after `run.started`: the configuration in force and the messages the run
    /// starts with that the log does not hold (the task, a resume's prompt).
    pub(crate) fn announce(&self, state: &RunState, config: crate::events::ResolvedConfig) {
        self.emitter.emit(Event::ConfigResolved {
            config: Box::new(config),
        });
        for message in &state.history[self.logged..] {
            self.emitter.emit(Event::MessageAppended {
                message: message.clone(),
            });
        }
    }

    /// The session is complete: the run has ended with `status`.
    pub(crate) fn finish(&self, state: &RunState, status: Status, checklist: Option<String>) {
        self.emitter.emit(Event::SessionFinished {
            status,
            checklist,
            num_turns: state.budget.turns,
            usage: state.budget.usage,
            total_cost_usd: state.budget.cost_usd,
        });
        // After a panic the state may lag what the events said (a result is an event
        // before the loop adds it); the check is for runs that ended in order.
        #[cfg(debug_assertions)]
        if status != Status::InternalError {
            self.check_log_holds(state);
        }
    }

    /// Debug builds check the fold: the log read back holds the history the run ends with,
    /// message for message (role and call ids), so a message added without its event fails
    /// every test that adds one.
    #[cfg(debug_assertions)]
    fn check_log_holds(&self, state: &RunState) {
        use crate::conversation::Message;
        // A log whose lines did not all reach the file (a full disk) is the run's
        // failure, reported as such; the check is for logs that hold every line.
        if self.sink.health().is_none_or(|h| h.incomplete()) {
            return;
        }
        let Ok(back) = Session::load(&self.path) else {
            return;
        };
        let shape = |history: &[Message]| -> Vec<String> {
            history
                .iter()
                .map(|m| match m {
                    Message::User { .. } => "user".to_owned(),
                    Message::Assistant { tool_calls, .. } => {
                        let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
                        format!("assistant {}", ids.join(","))
                    }
                    Message::Tool { tool_call_id, .. } => format!("tool {tool_call_id}"),
                })
                .collect()
        };
        assert_eq!(
            shape(&back.history),
            shape(&state.history),
            "{} does not hold the run's history",
            self.path.display()
        );
    }
}

#[async_trait::async_trait]
impl AgentHooks for SessionHooks {
    async fn after_response(&self, turn: u32, _state: &RunState) {
        super::fault::point("after_response", turn);
    }

    fn changes_coming(&self) {
        if let Some(c) = &self.checkpoints {
            c.begin();
        }
    }

    /// The readiness gate: the start snapshot and every checkpoint handed in so far are
    /// taken (and reported) before anything may change the workspace.
    async fn before_changes(&self) {
        if let Some(c) = &self.checkpoints {
            c.ready();
        }
    }

    /// A turn that changes only files it names need not wait for the start snapshot:
    /// those files are captured for it instead (`checkpoint::Checkpoints::capture_before`).
    async fn before_named_changes(&self, calls: &[(String, serde_json::Value)]) {
        if let Some(c) = &self.checkpoints
            && !c.capture_before(calls)
        {
            c.ready();
        }
    }

    async fn tool_finished(&self, turn: u32, _call_id: &str) {
        super::fault::point("tool_finished", turn);
    }

    async fn after_mutation(&self, turn: u32, call_id: &str, tool: &str, args: &serde_json::Value) {
        if let Some(c) = &self.checkpoints {
            c.after_call(turn, call_id, tool, args);
        }
    }

    async fn after_turn(&self, turn: u32, _state: &RunState) {
        super::fault::point("after_turn", turn);
    }
}
