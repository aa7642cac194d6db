//! The calls and messages of the transcript: a response and its calls, each call's
//! verdict, start, end and result, a message to the model, a compaction's summary, a
//! checkpoint after a call.

use super::TranscriptFold;
use crate::conversation::{Message, ToolCall, human_size};
use crate::events::{Envelope, Event};
use crate::report::transcript::{Call, CheckpointMark, Entry, Response, Verdict};

impl TranscriptFold {
    /// `permission.decision`: a call a rule did not allow outright.
    pub(super) fn decided(&mut self, agent: usize, env: &Envelope) {
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
        let c = self.call_mut(agent, call_id, tool, env.seq);
        c.arguments = Some(arguments.clone());
        c.verdict = Verdict::Decided {
            resolution: *resolution,
            decision: decision.clone(),
        };
    }

    /// `tool.started`: the call runs, with the arguments the tool read.
    pub(super) fn started(&mut self, agent: usize, env: &Envelope) {
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
        let c = self.call_mut(agent, call_id, tool, env.seq);
        c.arguments = Some(arguments.clone());
        if !matches!(c.verdict, Verdict::Decided { .. }) {
            c.verdict = Verdict::Allowed(decision.clone());
        }
    }

    /// `tool.finished`: how the call ended (its whole result comes with the message).
    pub(super) fn finished(&mut self, agent: usize, env: &Envelope) {
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
        let c = self.call_mut(agent, call_id, tool, env.seq);
        c.status = Some(*status);
        c.duration_ms = Some(*duration_ms);
        if c.output.is_none() {
            c.output = Some(output.clone());
            c.output_seq = Some(env.seq);
        }
    }

    pub(super) fn response(&mut self, agent: usize, env: &Envelope) {
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

    pub(super) fn new_call(
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

    /// The call `id` of `agent`, to change (made as `call_for` makes it).
    fn call_mut(&mut self, agent: usize, id: &str, tool: &str, seq: u64) -> &mut Call {
        let call = self.call_for(agent, id, tool, seq);
        &mut self.t.calls[call]
    }

    /// The call an event names; one the model's response did not show (its events were
    /// lost) is made from the event.
    pub(super) fn call_for(&mut self, agent: usize, id: &str, tool: &str, seq: u64) -> usize {
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

    pub(super) fn message(&mut self, agent: usize, env: &Envelope, message: &Message) {
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
    pub(super) fn summary(&mut self, agent: usize, history: &[Message]) {
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

    pub(super) fn checkpoint(&mut self, event: &Event) {
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
