//! Keeping the conversation inside the model's context window, as Continue does: compact
//! (the model summarises the history, the summary replaces it) when a request would pass
//! the threshold, force it when a request would not fit at all, prune the oldest messages
//! when even that is not enough, and retry once after a provider's context-length error.
//! Tokens are counted over the system prompt and tools as the request sends them, and the
//! summary request is built by the same builder as every turn (`request.rs`).

use crate::context::compaction::{self, AutoContinue};
use crate::context::tokens::TokenCounter;
use crate::conversation::Message;
use crate::events::Event;
use crate::provider::{ProviderError, complete};

use super::user_hooks::PreCompact;
use super::{Agent, Outcome, RunState};

/// The context window of the model and the run's token counter.
#[derive(Debug)]
pub struct ContextWindow {
    pub counter: TokenCounter,
    pub context_length: u64,
    pub max_tokens: u64,
    pub threshold: Option<u64>,
    pub auto_continue: AutoContinue,
}

impl ContextWindow {
    /// The window for `model` with `context_length` tokens and replies of `max_tokens`.
    pub fn new(model: &str, context_length: u64, max_tokens: Option<u64>) -> Self {
        let max_tokens =
            max_tokens.unwrap_or_else(|| compaction::default_max_tokens(context_length));
        let threshold = compaction::threshold(context_length, max_tokens);
        ContextWindow {
            counter: TokenCounter::new(model, threshold.unwrap_or(0)),
            context_length,
            max_tokens,
            threshold,
            auto_continue: AutoContinue::default(),
        }
    }
}

/// Why a compaction is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    /// Below the threshold: nothing to do.
    None,
    /// At or over the threshold.
    Threshold,
    /// The next request would not fit at all.
    Overflow,
}

impl Agent<'_> {
    /// Tokens of the next request with the current history.
    fn request_tokens(&mut self, state: &RunState) -> u64 {
        let (system, tools) = self.request_frame();
        let Some(w) = self.window.as_mut() else {
            return 0;
        };
        blocking(|| w.counter.count_request(&system, &state.history, &tools))
    }

    pub(super) fn need(&mut self, state: &RunState) -> Need {
        let tokens = self.request_tokens(state);
        let Some(w) = self.window.as_ref() else {
            return Need::None;
        };
        if !compaction::fits(tokens, w.max_tokens, w.context_length) {
            Need::Overflow
        } else if w.threshold.is_some_and(|t| tokens >= t) {
            Need::Threshold
        } else {
            Need::None
        }
    }

    /// Compact if needed; prune the oldest messages if it still does not fit. `Err` ends
    /// the run (stopped, or the context cannot be made to fit).
    pub(super) async fn keep_in_window(
        &mut self,
        turn: u32,
        state: &mut RunState,
        force: bool,
    ) -> Result<(), Outcome> {
        let need = self.need(state);
        // Counting a long history takes a while: a limit reached meanwhile binds here.
        if let Some(outcome) = self.stopped() {
            return Err(outcome);
        }
        if need == Need::None && !force {
            return Ok(());
        }
        self.compact(turn, state)
            .await
            .map_err(|e| self.stopped().unwrap_or(e))?;
        if let Some(outcome) = self.stopped() {
            return Err(outcome);
        }
        if self.need(state) != Need::Overflow {
            return Ok(());
        }
        let (system, tools) = self.request_frame();
        if let Some(w) = self.window.as_mut() {
            let (max, ctx) = (w.max_tokens, w.context_length);
            let counter = &mut w.counter;
            blocking(|| {
                compaction::prune_to_fit(&mut state.history, |h| {
                    compaction::fits(counter.count_request(&system, h, &tools), max, ctx)
                });
            });
        }
        if self.need(state) == Need::Overflow {
            return Err(Outcome::Provider(ProviderError::ContextLength(
                "the conversation does not fit in the context window even after compaction and pruning".to_owned(),
            )));
        }
        Ok(())
    }

    /// Ask the model for a summary and replace the history with the task and the summary.
    /// A failed summary keeps the history (the run goes on, as in Continue).
    pub(super) async fn compact(&mut self, turn: u32, state: &mut RunState) -> Result<(), Outcome> {
        if self.window.is_none() {
            return Ok(());
        }
        let instructions = match self.pre_compact_hooks().await {
            PreCompact::Go(instructions) => instructions,
            PreCompact::Skip => return Ok(()),
            PreCompact::Halt(outcome) => return Err(outcome),
        };
        let (system, tools) = self.request_frame();
        let Some(w) = self.window.as_mut() else {
            return Ok(());
        };
        let (before, messages) = blocking(|| {
            let before = w.counter.count_request(&system, &state.history, &tools);
            let fixed = w.counter.count_request(&system, &[], &tools);
            let budget = compaction::summary_budget(w.context_length, w.max_tokens, fixed);
            (
                before,
                compaction::compaction_request_with(
                    &state.history,
                    budget,
                    &mut w.counter,
                    &instructions,
                ),
            )
        });
        if let Some(outcome) = self.stopped() {
            return Err(outcome);
        }
        let request = self.build_request(messages);
        let response = complete(
            self.client,
            &request,
            &self.retry_policy(),
            self.config.idle_timeout,
            self.stop.token(),
            &mut |_| {},
        )
        .await;
        let summary = match response {
            Ok(r) => {
                let usage = r.usage.unwrap_or_default();
                let cost = self.cost(&usage, r.usage.is_some());
                state.budget.record(&usage, cost);
                r.text
            }
            Err(ProviderError::Cancelled) => {
                return Err(self.stopped().unwrap_or(Outcome::Interrupted));
            }
            Err(e) => {
                self.emitter.emit(Event::Warning {
                    message: format!("compaction failed, the history is kept: {e}"),
                });
                return Ok(());
            }
        };
        if summary.trim().is_empty() {
            self.emitter.emit(Event::Warning {
                message: "compaction returned an empty summary; the history is kept".to_owned(),
            });
            return Ok(());
        }
        let messages_before = state.history.len();
        let task = state
            .history
            .iter()
            .find(|m| matches!(m, Message::User { .. }))
            .cloned();
        let mut history: Vec<Message> = task.into_iter().collect();
        history.extend(compaction::apply_summary(summary));
        self.emitter.emit(Event::HistoryReplaced {
            history: history.clone(),
        });
        state.history = history;
        let after = self.request_tokens(state);
        if let Some(w) = self.window.as_mut() {
            w.auto_continue.compacted();
        }
        self.emitter.emit(Event::Compaction {
            turn,
            tokens_before: before,
            tokens_after: after,
            messages_before,
            messages_after: state.history.len(),
        });
        self.hooks.after_turn(turn, state).await;
        Ok(())
    }
}

/// Runs CPU-bound counting without stalling other tasks: on a multi-threaded runtime the
/// worker hands its other tasks over first; a single-threaded runtime (a lone run) has
/// nothing to hand over to, so the work runs in place.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}
