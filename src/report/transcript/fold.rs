//! Which event becomes which part of the transcript. Every event type is named in one
//! exhaustive `match`, so a new event is a compile error here until it is placed.
//!
//! Events of a nested agent (`parent_call_id`) build that agent's own conversation,
//! reached from the call it works for; their tokens and cost count in the main agent's
//! turn that made the call.

use std::collections::{BTreeMap, HashMap};

#[path = "calls.rs"]
mod calls;

use super::{Agent, Entry, RunStart, Transcript, Turn};
use crate::events::{Envelope, Event, EventSink};
use crate::report::ResultBuilder;

/// The fold state: the transcript so far and the indexes that place the next event.
#[derive(Debug)]
pub struct TranscriptFold {
    t: Transcript,
    result: ResultBuilder,
    /// (agent, the model's call id) → the latest call of that id.
    calls_by_id: HashMap<(usize, String), usize>,
    /// A call id → the latest call of that id in any agent (what a nested agent's
    /// `parent_call_id` and a checkpoint name).
    any_call: HashMap<String, usize>,
    /// `parent_call_id` → its agent.
    agent_of: HashMap<String, usize>,
    /// Per agent: the response whose `message.appended` has not come yet.
    pending: HashMap<usize, usize>,
    /// The main agent's current turn row.
    row: Option<usize>,
    notices: BTreeMap<String, (usize, Option<String>)>,
}

impl Default for TranscriptFold {
    fn default() -> Self {
        TranscriptFold {
            t: Transcript {
                result: ResultBuilder::default().result(),
                runs: Vec::new(),
                config: None,
                agents: vec![Agent::default()],
                calls: Vec::new(),
                turns: Vec::new(),
                checkpoints: Vec::new(),
                changes: None,
                notices: Vec::new(),
                events: 0,
                last_seq: 0,
                last_ts: String::new(),
            },
            result: ResultBuilder::default(),
            calls_by_id: HashMap::new(),
            any_call: HashMap::new(),
            agent_of: HashMap::new(),
            pending: HashMap::new(),
            row: None,
            notices: BTreeMap::new(),
        }
    }
}

impl TranscriptFold {
    pub fn finish(mut self) -> Transcript {
        self.t.result = self.result.result();
        self.t.notices = self
            .notices
            .into_iter()
            .map(|(server, (n, last))| (server, n, last))
            .collect();
        self.t
    }

    pub fn on_event(&mut self, env: &Envelope) {
        self.result.on_event(env);
        self.t.events += 1;
        self.t.last_seq = env.seq;
        self.t.last_ts.clone_from(&env.ts);
        let agent = self.agent(env.parent_call_id.as_deref());
        let main = agent == 0;
        let e = &env.event;
        match e {
            Event::RunStarted { .. } if main => self.run_started(env),
            Event::TurnStarted { turn } if main => self.turn_started(*turn, env),
            Event::TurnCompleted { .. } if main => self.turn_completed(env),
            Event::ConfigResolved { config } if main => {
                self.t.config = serde_json::to_value(config).ok()
            }
            // The record of a sandbox set up after the start (see `sandbox::deferred`).
            Event::SandboxEstablished { sandbox } if main => {
                if let Some(run) = self.t.runs.last_mut() {
                    run.sandbox = Some((**sandbox).clone());
                }
            }
            // Still pending as the run ends: no command needed it (as result.json says).
            Event::RunCompleted { .. } if main => {
                let run = self.t.runs.last_mut().and_then(|r| r.sandbox.as_mut());
                if let Some(sandbox) = run {
                    crate::sandbox::settle_unused(sandbox);
                }
            }
            Event::RunStarted { .. }
            | Event::TurnStarted { .. }
            | Event::TurnCompleted { .. }
            | Event::ConfigResolved { .. }
            | Event::SandboxEstablished { .. } => {}
            Event::AssistantMessage { .. } => self.response(agent, env),
            Event::PermissionDecision { .. } => self.decided(agent, env),
            Event::ToolStarted { .. } => self.started(agent, env),
            Event::ToolFinished { .. } => self.finished(agent, env),
            Event::MessageAppended { message } => self.message(agent, env, message),
            Event::HistoryReplaced { history } => self.summary(agent, history),
            Event::CheckpointCreated { .. } => self.checkpoint(e),
            Event::ChangesRecorded(c) => self.t.changes = Some(c.clone()),
            Event::McpNotification { .. } => self.notice(e),
            Event::AttemptStarted { attempt } if *attempt > 1 => {
                self.push(agent, Entry::Attempt(*attempt));
            }
            Event::AttemptStarted { .. } => {}
            Event::ModelRetry { .. }
            | Event::OutputIncomplete { .. }
            | Event::Compaction { .. } => {
                self.note(agent, e);
            }
            Event::CheckFinished(c) => self.push(agent, Entry::Check(c.clone())),
            Event::OutputValidated { valid, errors, .. } => {
                let (valid, errors) = (*valid, errors.clone());
                self.push(agent, Entry::Validated { valid, errors });
            }
            Event::RuleApplied {
                turn, name, reason, ..
            } => {
                let (turn, name, reason) = (*turn, name.clone(), reason.clone());
                self.push(agent, Entry::Rule { turn, name, reason });
            }
            Event::Warning { message } => self.push(agent, Entry::Warning(message.clone())),
            // result.json's records: the result (`self.result`) keeps them.
            Event::ArtifactCollected(_)
            | Event::UploadFinished { .. }
            | Event::McpServer(_)
            | Event::SessionFinished { .. }
            | Event::RunCompleted { .. } => {}
            // A hook's answer shows through the call's `permission.decision` (source `hook`).
            Event::HookRan { .. } => {}
        }
    }

    fn turn_completed(&mut self, env: &Envelope) {
        if let Some(row) = self.row {
            self.t.turns[row].ended.clone_from(&env.ts);
        }
    }

    /// A retry, an incomplete answer or a compaction, as the conversation notes it.
    fn note(&mut self, agent: usize, event: &Event) {
        let entry = if let Event::ModelRetry {
            turn,
            attempt,
            delay_ms,
            error_kind,
            message,
            ..
        } = event
        {
            Entry::Retry {
                turn: *turn,
                attempt: *attempt,
                delay_ms: *delay_ms,
                kind: *error_kind,
                message: message.clone(),
            }
        } else if let Event::OutputIncomplete {
            turn,
            stop_reason,
            action,
        } = event
        {
            Entry::Incomplete {
                turn: *turn,
                stop_reason: stop_reason.clone(),
                action: *action,
            }
        } else if let Event::Compaction {
            turn,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
        } = event
        {
            Entry::Compaction {
                turn: *turn,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
                messages_before: *messages_before,
                messages_after: *messages_after,
                summary: None,
            }
        } else {
            return;
        };
        self.push(agent, entry);
    }

    fn notice(&mut self, event: &Event) {
        if let Event::McpNotification {
            server, message, ..
        } = event
        {
            let n = self.notices.entry(server.clone()).or_default();
            n.0 += 1;
            if message.is_some() {
                n.1.clone_from(message);
            }
        }
    }

    fn push(&mut self, agent: usize, entry: Entry) {
        self.t.agents[agent].entries.push(entry);
    }

    /// The agent an event belongs to (a nested agent is made at its first event).
    fn agent(&mut self, parent: Option<&str>) -> usize {
        let Some(parent) = parent else { return 0 };
        if let Some(&a) = self.agent_of.get(parent) {
            return a;
        }
        let call = self.any_call.get(parent).copied();
        let index = self.t.agents.len();
        self.t.agents.push(Agent {
            parent: Some(parent.to_owned()),
            call,
            ..Agent::default()
        });
        if let Some(c) = call {
            self.t.calls[c].subagent = Some(index);
        }
        self.agent_of.insert(parent.to_owned(), index);
        index
    }

    fn run_started(&mut self, env: &Envelope) {
        let Event::RunStarted {
            job,
            prompt,
            provider,
            model,
            workspace,
            tools,
            mode,
            resumed,
            checks,
            isolation,
            sandbox,
            policy,
            ..
        } = &env.event
        else {
            return;
        };
        self.t.runs.push(RunStart {
            seq: env.seq,
            ts: env.ts.clone(),
            job: job.clone(),
            prompt: prompt.clone(),
            provider: provider.clone(),
            model: model.clone(),
            workspace: workspace.clone(),
            tools: tools.clone(),
            mode: *mode,
            resumed: *resumed,
            checks: checks.clone(),
            isolation: *isolation,
            sandbox: sandbox.as_deref().cloned(),
            policy: policy.clone(),
        });
        self.push(0, Entry::Run(self.t.runs.len() - 1));
        self.row = None;
    }

    fn turn_started(&mut self, turn: u32, env: &Envelope) {
        self.t.turns.push(Turn {
            number: turn,
            seq: env.seq,
            started: env.ts.clone(),
            ended: env.ts.clone(),
            ..Turn::default()
        });
        let row = self.t.turns.len() - 1;
        self.row = Some(row);
        self.push(0, Entry::Turn(row));
    }

    /// The main agent's turn row an agent's work counts in.
    fn row_of(&self, agent: usize) -> Option<usize> {
        if agent == 0 {
            return self.row;
        }
        let call = self.t.agents[agent].call?;
        self.t.calls[call].turn_row
    }
}
