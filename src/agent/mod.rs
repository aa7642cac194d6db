//! The agent loop, headless: ask the model, run the tools it calls, feed the results back,
//! until it answers without calling a tool — or a limit, a denial under `on_ask: fail`, a
//! provider failure or a stop signal ends the run. Everything it does is an event.
//!
//! The loop sees only traits (`ModelClient`, `Tool`) and leaf types; `app` wires the rest.

pub mod budget;
mod dispatch;
mod hooks;
mod request;
mod rule_trigger;
mod stop;
mod stop_reason;
pub(crate) mod system_prompt;
mod text_history;
pub mod text_tools;
mod user_hooks;
mod window;

pub use budget::Budget;
pub use hooks::{AgentHooks, NoHooks};
pub use stop::{StopCause, StopSignal};
pub use system_prompt::{
    STATUS_UNAVAILABLE, SystemPrompt, git_status, status_lines, status_options, status_text,
};
pub use text_history::TextHistory;
pub use window::ContextWindow;

use stop_reason::stop_action;

use std::sync::Arc;
use std::time::Duration;

use crate::context::pricing::{self, Price};
use crate::conversation::{Message, Usage};
use crate::events::{Emitter, Event};
use crate::exit_code::Limit;
use crate::job::OnAsk;
use crate::permissions::Policy;
use crate::provider::{ModelClient, Notice, ProviderError, RetryPolicy, complete};
use crate::redact::Redactor;
use crate::tools::{Control, ToolRegistry, ToolShared};

/// How a run of the loop ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The model answered without calling a tool.
    Completed,
    /// The agent gave up (ReportFailure or Exit).
    Failed(String),
    /// The agent finished, but its work failed the job's checks or output schema.
    Rejected(String),
    /// A call needed approval and `on_ask: fail`.
    ApprovalRequired(String),
    Limit(Limit),
    Provider(ProviderError),
    /// The environment failed (a tool could not run at all).
    Internal(String),
    Interrupted,
    /// The final answer was cut by the output-token limit, also after one "continue".
    Truncated(String),
    /// The provider stopped the answer with its content filter.
    Filtered(String),
}

/// Settings of the loop that do not change during a run.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub model: String,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub on_ask: OnAsk,
    pub retry: RetryPolicy,
    pub idle_timeout: Duration,
    /// Price used for cost; `None` = unknown.
    pub price: Option<Price>,
    /// Untrusted mode: tool output is marked for the model.
    pub trust: crate::untrusted::Trust,
    /// Tool calls as `<tool>{json}</tool>` text, for models without native tool calling.
    pub text_tools: bool,
    /// Tool calls run from one response; the rest get an error result.
    pub max_calls: usize,
}

/// Everything the loop needs, borrowed from the composition root.
pub struct Agent<'a> {
    pub client: &'a dyn ModelClient,
    pub tools: &'a ToolRegistry,
    pub policy: &'a Policy,
    pub shared: Arc<ToolShared>,
    pub emitter: &'a Emitter,
    pub redactor: &'a Redactor,
    pub stop: StopSignal,
    pub config: AgentConfig,
    pub system: SystemPrompt,
    pub hooks: &'a dyn AgentHooks,
    /// The context window (compaction); `None` turns compaction off.
    pub window: Option<ContextWindow>,
    /// Rules waiting for the run to touch a matching file.
    pub rules: Vec<crate::rules::RuleDef>,
    /// A nested agent's own policy: each call must also pass it (the stricter verdict wins).
    pub narrow: Option<&'a Policy>,
    /// The history in text form between requests (`tool_call_format: text` only).
    pub text_history: TextHistory,
    /// The job's hooks (Claude Code's protocol) and people's answers to deferred calls.
    pub user_hooks: &'a crate::hooks::Hooks,
}

/// The state a run accumulates: history, budget and the last answer.
#[derive(Debug, Clone)]
pub struct RunState {
    pub history: Vec<Message>,
    pub budget: Budget,
    /// The last assistant text: the run's answer.
    pub final_text: String,
    /// Calls of the last response that were running when an earlier process died; on
    /// resume they are answered as interrupted instead of being run again.
    pub in_flight: Vec<String>,
    /// A resume's new instruction: added once the calls the last response left are
    /// answered (a message between a call and its result is one no provider accepts).
    pub follow_up: Option<Message>,
    /// A Stop hook sent the agent back to work in this run (`stop_hook_active`).
    pub stop_hook_active: bool,
}

impl RunState {
    pub fn new(history: Vec<Message>, budget: Budget) -> Self {
        RunState {
            history,
            budget,
            final_text: String::new(),
            in_flight: Vec::new(),
            follow_up: None,
            stop_hook_active: false,
        }
    }

    /// Tool calls of the last assistant message that have no result yet.
    pub fn unanswered_calls(&self) -> Vec<crate::conversation::ToolCall> {
        let Some(pos) = self
            .history
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            return Vec::new();
        };
        let Message::Assistant { tool_calls, .. } = &self.history[pos] else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.history[pos + 1..]
            .iter()
            .filter_map(|m| match m {
                Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        tool_calls
            .iter()
            .filter(|c| !answered.contains(&c.id.as_str()))
            .cloned()
            .collect()
    }
}

impl Agent<'_> {
    /// Run the loop on `state` until it ends; the state keeps everything that happened.
    pub async fn run(&mut self, state: &mut RunState) -> Outcome {
        if let Some(outcome) = self.finish_pending(state).await {
            return outcome;
        }
        if let Some(message) = state.follow_up.take() {
            self.append(state, message);
        }
        let mut cuts = stop_reason::Cuts::default();
        loop {
            if let Some(outcome) = self.stopped() {
                return outcome;
            }
            if let Some(limit) = state.budget.exceeded() {
                return Outcome::Limit(limit);
            }
            state.budget.turns += 1;
            let turn = state.budget.turns;
            self.emitter.emit(Event::TurnStarted { turn });
            if let Err(outcome) = self.keep_in_window(turn, state, false).await {
                return self.stopped().unwrap_or(outcome);
            }
            let response = match self.request(turn, state).await {
                Ok(r) => r,
                Err(ProviderError::ContextLength(_)) if self.window.is_some() => {
                    // The provider counts differently: compact once and retry once.
                    if let Err(outcome) = self.keep_in_window(turn, state, true).await {
                        return outcome;
                    }
                    match self.request(turn, state).await {
                        Ok(r) => r,
                        Err(e) => return self.request_failed(turn, e),
                    }
                }
                Err(e) => return self.request_failed(turn, e),
            };
            let usage = response.usage.unwrap_or_default();
            let cost = self.cost(&usage, response.usage.is_some());
            state.budget.record(&usage, cost);
            self.emitter.emit(Event::AssistantMessage {
                turn,
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
                usage: response.usage,
                cost_usd: cost,
                stop_reason: response.finish.as_ref().map(|f| f.as_str().to_owned()),
            });
            if response.tool_calls.is_empty() || !response.text.is_empty() {
                state.final_text = match cuts.head.take() {
                    Some(head) if response.tool_calls.is_empty() => head + &response.text,
                    _ => response.text.clone(),
                };
            }
            let stop = stop_action(&response, &cuts);
            let calls = response.tool_calls.clone();
            self.append(
                state,
                Message::assistant_with(response.text, response.tool_calls, response.reasoning),
            );
            // A response without tool calls ends the turn at once, and `after_turn` keeps
            // the same state: one session write fewer per run.
            if !calls.is_empty() {
                self.hooks.after_response(turn, state).await;
            }
            if let Some(action) = stop {
                match self.after_cut(turn, action, state, &mut cuts).await {
                    Some(outcome) => return outcome,
                    None => continue,
                }
            }
            cuts.window_compacted = false;
            let nudge = self
                .window
                .as_mut()
                .and_then(|w| w.auto_continue.after_reply(calls.is_empty()));
            if calls.is_empty() {
                if let Some(message) = nudge {
                    // The model stopped right after a compaction: ask it once to go on.
                    self.append(state, message);
                    self.hooks.after_turn(turn, state).await;
                    self.turn_completed(turn, state);
                    continue;
                }
                match self.stop_hooks(state).await {
                    user_hooks::StopHook::Finish => {}
                    user_hooks::StopHook::GoOn(text) => {
                        self.append(state, Message::user(text));
                        self.hooks.after_turn(turn, state).await;
                        self.turn_completed(turn, state);
                        continue;
                    }
                    user_hooks::StopHook::Halt(outcome) => {
                        self.hooks.answered(turn, state).await;
                        self.turn_completed(turn, state);
                        return outcome;
                    }
                }
                self.hooks.answered(turn, state).await;
                self.turn_completed(turn, state);
                return Outcome::Completed;
            }
            self.shared.set_remaining(state.budget.remaining());
            let result = self.dispatch(turn, &calls, &[]).await;
            for spent in self.shared.take_spent() {
                state
                    .budget
                    .absorb(spent.turns, &spent.usage, spent.cost_usd);
            }
            state.history.extend(result.messages);
            // A stop (time limit, signal) that came while the tools ran ends the run now:
            // the final write saves the session.
            if let Some(outcome) = self.stopped() {
                self.turn_completed(turn, state);
                return result.outcome.unwrap_or(outcome);
            }
            self.apply_touched_rules(turn, &calls);
            self.hooks.after_turn(turn, state).await;
            if let Some(outcome) = result.outcome {
                self.turn_completed(turn, state);
                return outcome;
            }
            let after_tools = self.keep_in_window(turn, state, false).await;
            self.turn_completed(turn, state);
            if let Err(outcome) = after_tools {
                return self.stopped().unwrap_or(outcome);
            }
        }
    }

    /// A resumed run first answers the calls its last response left unanswered: calls that
    /// were running when the process died are reported as interrupted, the rest run now.
    async fn finish_pending(&mut self, state: &mut RunState) -> Option<Outcome> {
        let calls = state.unanswered_calls();
        if calls.is_empty() {
            return None;
        }
        let turn = state.budget.turns;
        let interrupted = std::mem::take(&mut state.in_flight);
        let result = self.dispatch(turn, &calls, &interrupted).await;
        state.history.extend(result.messages);
        // Results the killed process had, then these: in the order of the calls.
        crate::conversation::order_tool_results(&mut state.history);
        self.hooks.after_turn(turn, state).await;
        result.outcome
    }

    /// Appends a message to the history, and says so on the event stream (the session
    /// log is the fold of these events).
    pub fn append(&self, state: &mut RunState, message: Message) {
        self.emitter.emit(Event::MessageAppended {
            message: message.clone(),
        });
        state.history.push(message);
    }

    /// The end of a turn, with the run's counters so far.
    pub(super) fn turn_completed(&self, turn: u32, state: &RunState) {
        self.emitter.emit(Event::TurnCompleted {
            turn,
            num_turns: state.budget.turns,
            usage: state.budget.usage,
            total_cost_usd: state.budget.cost_usd,
        });
    }

    /// The outcome of a model request that failed: a stop, a prompt refused by the
    /// provider's content filter (exit 1, as a filtered answer), or a provider failure.
    fn request_failed(&self, turn: u32, error: ProviderError) -> Outcome {
        if let Some(outcome) = self.stopped() {
            return outcome;
        }
        match error {
            ProviderError::Cancelled => Outcome::Interrupted,
            ProviderError::ContentFilter { .. } => {
                self.emitter.emit(Event::OutputIncomplete {
                    turn,
                    stop_reason: "content_filter".to_owned(),
                    action: crate::events::IncompleteAction::Fail,
                });
                Outcome::Filtered(error.to_string())
            }
            error => Outcome::Provider(error),
        }
    }

    /// The outcome for an external stop (timeout or signal), if one happened.
    pub fn stop_outcome(&self) -> Option<Outcome> {
        self.stopped()
    }

    /// The outcome for an external stop, if one happened.
    pub(super) fn stopped(&self) -> Option<Outcome> {
        match self.stop.cause()? {
            StopCause::Timeout => Some(Outcome::Limit(Limit::Timeout)),
            StopCause::Interrupted => Some(Outcome::Interrupted),
            StopCause::Environment(why) => Some(Outcome::Internal(why)),
        }
    }

    /// The retry policy of a request now: the job's, bounded by the run's time limit.
    pub(super) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            deadline: self.stop.deadline(),
            ..self.config.retry.clone()
        }
    }

    /// Cost of one response: known when the price is known and the provider reported usage
    /// (a free model, such as the script provider, costs 0 either way).
    pub(super) fn cost(&self, usage: &Usage, reported: bool) -> Option<f64> {
        let price = self.config.price.as_ref()?;
        let free = price.input_per_mtok == 0.0 && price.output_per_mtok == 0.0;
        (reported || free).then(|| pricing::cost(price, usage))
    }

    async fn request(
        &self,
        turn: u32,
        state: &RunState,
    ) -> Result<crate::provider::AssistantTurn, ProviderError> {
        // Text-format models: the history's text form, converted only where it grew.
        let text = self
            .config
            .text_tools
            .then(|| self.text_history.take(&state.history));
        let request = match &text {
            Some(t) => self.framed_request(t.as_slice().into()),
            None => self.build_request(&state.history),
        };
        let emitter = self.emitter;
        let redactor = self.redactor;
        let hooks = self.hooks;
        let mut on_notice = |notice: Notice<'_>| {
            if matches!(notice, Notice::ToolCallStarted) {
                hooks.changes_coming();
            }
            if let Notice::Retry {
                attempt,
                delay,
                server_wait,
                error,
            } = notice
            {
                // The progress line of the event below says it (once).
                tracing::debug!(
                    turn,
                    attempt,
                    delay_ms = delay.as_millis() as u64,
                    "model request failed, retrying: {}",
                    redactor.redact(&error.to_string())
                );
                emitter.emit(Event::ModelRetry {
                    turn,
                    attempt,
                    delay_ms: delay.as_millis() as u64,
                    error_kind: error.kind().to_owned(),
                    message: error.to_string(),
                    retry_after_ms: server_wait.map(|w| w.as_millis() as u64),
                });
            }
        };
        let mut turn_reply = complete(
            self.client,
            &request,
            &self.retry_policy(),
            self.config.idle_timeout,
            self.stop.token(),
            &mut on_notice,
        )
        .await?;
        if let Some(t) = text {
            self.text_history.keep(&state.history, t);
        }
        if self.config.text_tools && turn_reply.tool_calls.is_empty() {
            let (text, calls) = text_tools::parse(&turn_reply.text, turn);
            turn_reply.text = text;
            turn_reply.tool_calls = calls;
        }
        Ok(turn_reply)
    }
}

/// What the control signal of a tool means for the run.
pub(crate) fn control_outcome(control: &Control) -> Outcome {
    match control {
        Control::Exit => Outcome::Failed("the agent called Exit".to_owned()),
        Control::ReportFailure(reason) => Outcome::Failed(reason.clone()),
    }
}
