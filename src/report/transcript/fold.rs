//! Which event becomes which part of the transcript. Every event type is named in one
//! exhaustive `match`, so a new event is a compile error here until it is placed.
//!
//! Events of a nested agent (`parent_call_id`) build that agent's own conversation,
//! reached from the call it works for; their tokens and cost count in the main agent's
//! turn that made the call.

use std::collections::{BTreeMap, HashMap};

use super::{Agent, Call, CheckpointMark, Entry, Response, RunStart, Transcript, Turn, Verdict};
use crate::conversation::{Message, ToolCall, human_size};
use crate::events::{Envelope, Event};
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
            Event::ConfigResolved { config } if main => self.t.config = Some(config.clone()),
            Event::RunStarted { .. }
            | Event::TurnStarted { .. }
            | Event::TurnCompleted { .. }
            | Event::ConfigResolved { .. } => {}
            Event::AssistantMessage { .. } => self.response(agent, env),
            Event::PermissionDecision { .. } => self.decided(agent, env),
            Event::ToolStarted { .. } => self.started(agent, env),
            Event::ToolFinished { .. } => self.finished(agent, env),
            Event::MessageAppended { message } => self.message(agent, env, message),
            Event::HistoryReplaced { history } => self.summary(agent, history),
            Event::CheckpointCreated { .. } => self.checkpoint(e),
            Event::ChangesRecorded(c) => self.t.changes = Some(c.clone()),
            Event::McpNotification { .. } => self.notice(e),
            Event::AttemptStarted { .. }
            | Event::ModelRetry { .. }
            | Event::OutputIncomplete { .. }
            | Event::Compaction { .. }
            | Event::CheckFinished(_)
            | Event::OutputValidated { .. }
            | Event::RuleApplied { .. }
            | Event::Warning { .. } => {
                if let Some(entry) = entry(e) {
                    self.push(agent, entry);
                }
            }
            // result.json's records: the result (`self.result`) keeps them.
            Event::ArtifactCollected(_)
            | Event::UploadFinished { .. }
            | Event::McpServer(_)
            | Event::SessionFinished { .. }
            | Event::RunCompleted { .. } => {}
        }
    }

    fn turn_completed(&mut self, env: &Envelope) {
        if let Some(row) = self.row {
            self.t.turns[row].ended.clone_from(&env.ts);
        }
    }

    /// `permission.decision`: a call a rule did not allow outright.
    fn decided(&mut self, agent: usize, env: &Envelope) {
        let Event::PermissionDecision {
            call_id,
            tool,
            arguments,
            resolution,
            decision,
            ..
        } = &env.event
        else {
            return;
        };
        let call = self.call_for(agent, call_id, tool, env.seq);
        let c = &mut self.t.calls[call];
        c.arguments = Some(arguments.clone());
        c.verdict = Verdict::Decided {
            resolution: *resolution,
            decision: decision.clone(),
        };
    }

    /// `tool.started`: the call runs, with the arguments the tool read.
    fn started(&mut self, agent: usize, env: &Envelope) {
        let Event::ToolStarted {
            call_id,
            tool,
            arguments,
            decision,
            ..
        } = &env.event
        else {
            return;
        };
        let call = self.call_for(agent, call_id, tool, env.seq);
        let c = &mut self.t.calls[call];
        c.arguments = Some(arguments.clone());
        if !matches!(c.verdict, Verdict::Decided { .. }) {
            c.verdict = Verdict::Allowed(decision.clone());
        }
    }

    /// `tool.finished`: how the call ended (its whole result comes with the message).
    fn finished(&mut self, agent: usize, env: &Envelope) {
        let Event::ToolFinished {
            call_id,
            tool,
            status,
            output,
            duration_ms,
            ..
        } = &env.event
        else {
            return;
        };
        let call = self.call_for(agent, call_id, tool, env.seq);
        let c = &mut self.t.calls[call];
        c.status = Some(*status);
        c.duration_ms = Some(*duration_ms);
        if c.output.is_none() {
            c.output = Some(output.clone());
            c.output_seq = Some(env.seq);
        }
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
            mode: mode.clone(),
            resumed: *resumed,
            checks: checks.clone(),
            isolation: isolation.clone(),
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

    fn response(&mut self, agent: usize, env: &Envelope) {
        let Event::AssistantMessage {
            turn,
            text,
            tool_calls,
            usage,
            cost_usd,
            stop_reason,
        } = &env.event
        else {
            return;
        };
        let row = self.row_of(agent);
        let calls = tool_calls
            .iter()
            .map(|c| self.new_call(agent, c, *turn, row, env.seq))
            .collect();
        let a = &mut self.t.agents[agent];
        a.responses += 1;
        if let Some(u) = usage {
            a.usage.add(u);
        }
        a.cost.add(*cost_usd);
        if let Some(r) = row {
            let t = &mut self.t.turns[r];
            t.responses += 1;
            t.usage.add(&usage.unwrap_or_default());
            t.cost.add(*cost_usd);
            t.ended.clone_from(&env.ts);
        }
        a.entries.push(Entry::Response(Response {
            seq: env.seq,
            ts: env.ts.clone(),
            turn: *turn,
            text: text.clone(),
            reasoning: String::new(),
            calls,
            usage: *usage,
            cost: *cost_usd,
            stop_reason: stop_reason.clone(),
        }));
        self.pending.insert(agent, a.entries.len() - 1);
    }

    fn new_call(
        &mut self,
        agent: usize,
        call: &ToolCall,
        turn: u32,
        row: Option<usize>,
        seq: u64,
    ) -> usize {
        let index = self.t.calls.len();
        self.t.calls.push(Call {
            agent,
            id: call.id.clone(),
            name: call.name.clone(),
            turn_row: row,
            turn,
            raw_arguments: call.arguments.clone(),
            seq,
            arguments: None,
            verdict: Verdict::NotRun,
            status: None,
            duration_ms: None,
            output: None,
            output_seq: None,
            is_error: false,
            images: Vec::new(),
            checkpoint: None,
            subagent: None,
        });
        if let Some(r) = row.filter(|_| agent == 0) {
            self.t.turns[r].calls.push(index);
        }
        self.calls_by_id.insert((agent, call.id.clone()), index);
        self.any_call.insert(call.id.clone(), index);
        index
    }

    /// The call an event names; one the model's response did not show (its events were
    /// lost) is made from the event.
    fn call_for(&mut self, agent: usize, id: &str, tool: &str, seq: u64) -> usize {
        if let Some(&c) = self.calls_by_id.get(&(agent, id.to_owned())) {
            return c;
        }
        let call = ToolCall {
            id: id.to_owned(),
            name: tool.to_owned(),
            arguments: String::new(),
        };
        let row = self.row_of(agent);
        let turn = row.map_or(0, |r| self.t.turns[r].number);
        let index = self.new_call(agent, &call, turn, row, seq);
        self.push(
            agent,
            Entry::Response(Response {
                seq,
                turn,
                calls: vec![index],
                ..Response::default()
            }),
        );
        index
    }

    fn message(&mut self, agent: usize, env: &Envelope, message: &Message) {
        match message {
            Message::User { content } => self.push(
                agent,
                Entry::User {
                    seq: env.seq,
                    ts: env.ts.clone(),
                    text: content.clone(),
                },
            ),
            Message::Assistant { reasoning, .. } => {
                let entry = self.pending.remove(&agent);
                if let Some(Entry::Response(r)) =
                    entry.and_then(|e| self.t.agents[agent].entries.get_mut(e))
                {
                    r.reasoning.clone_from(&reasoning.text);
                }
            }
            Message::Tool {
                tool_call_id,
                name,
                content,
                is_error,
                images,
            } => {
                let call = self.call_for(agent, tool_call_id, name, env.seq);
                let c = &mut self.t.calls[call];
                c.output = Some(content.clone());
                c.output_seq = Some(env.seq);
                c.is_error = *is_error;
                c.images = images
                    .iter()
                    .map(|i| format!("{}, {}", i.mime_type, human_size(i.data.len() / 4 * 3)))
                    .collect();
            }
        }
    }

    /// After a compaction: the summary that now stands for the older history.
    fn summary(&mut self, agent: usize, history: &[Message]) {
        let text = history.iter().find_map(|m| match m {
            Message::Assistant {
                content,
                summary: true,
                ..
            } => Some(content.clone()),
            _ => None,
        });
        let entries = &mut self.t.agents[agent].entries;
        if let Some(Entry::Compaction { summary, .. }) = entries
            .iter_mut()
            .rev()
            .find(|e| matches!(e, Entry::Compaction { .. }))
        {
            *summary = text;
        }
    }

    fn checkpoint(&mut self, event: &Event) {
        let Event::CheckpointCreated {
            turn,
            index,
            reference,
            commit,
            call_id,
            label,
            files_changed,
            ..
        } = event
        else {
            return;
        };
        let call = call_id
            .as_ref()
            .and_then(|id| self.any_call.get(id).copied());
        let mark = self.t.checkpoints.len();
        self.t.checkpoints.push(CheckpointMark {
            index: *index,
            turn: *turn,
            reference: reference.clone(),
            commit: commit.clone(),
            label: label.clone(),
            files_changed: *files_changed,
            call,
        });
        if let Some(c) = call {
            self.t.calls[c].checkpoint = Some(mark);
        }
    }
}

/// The conversation entry an event is by itself (none for an event that is not one).
fn entry(event: &Event) -> Option<Entry> {
    // Cloned: only the small events this is called for come here.
    Some(match event.clone() {
        Event::AttemptStarted { attempt } if attempt > 1 => Entry::Attempt(attempt),
        Event::ModelRetry {
            turn,
            attempt,
            delay_ms,
            error_kind,
            message,
        } => Entry::Retry {
            turn,
            attempt,
            delay_ms,
            kind: error_kind,
            message,
        },
        Event::OutputIncomplete {
            turn,
            stop_reason,
            action,
        } => Entry::Incomplete {
            turn,
            stop_reason,
            action,
        },
        Event::Compaction {
            turn,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
        } => Entry::Compaction {
            turn,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            summary: None,
        },
        Event::CheckFinished(c) => Entry::Check(c),
        Event::OutputValidated { valid, errors, .. } => Entry::Validated { valid, errors },
        Event::RuleApplied {
            turn, name, reason, ..
        } => Entry::Rule { turn, name, reason },
        Event::Warning { message } => Entry::Warning(message),
        Event::AttemptStarted { .. }
        | Event::RunStarted { .. }
        | Event::TurnStarted { .. }
        | Event::AssistantMessage { .. }
        | Event::PermissionDecision { .. }
        | Event::ToolStarted { .. }
        | Event::ToolFinished { .. }
        | Event::TurnCompleted { .. }
        | Event::CheckpointCreated { .. }
        | Event::ArtifactCollected(_)
        | Event::UploadFinished { .. }
        | Event::McpServer(_)
        | Event::ChangesRecorded(_)
        | Event::McpNotification { .. }
        | Event::MessageAppended { .. }
        | Event::HistoryReplaced { .. }
        | Event::ConfigResolved { .. }
        | Event::SessionFinished { .. }
        | Event::RunCompleted { .. } => return None,
    })
}
