//! Stop reasons are outcomes: an answer the model did not finish is not a success.
//!
//! Each known stop reason (`provider/stop_words.rs`) has its action:
//! - cut by the output-token limit (`length`, Anthropic `max_tokens`): one "continue" turn, as
//!   Continue does after a compaction; cut again, the run ends as [`Outcome::Truncated`];
//! - stopped or refused by a safety system (`content_filter`, `refusal`, `SAFETY`): the run
//!   ends as [`Outcome::Filtered`], naming the server's word;
//! - the model's context window filled (`model_context_window_exceeded`, Mistral's
//!   `model_length`): the history is compacted and the work goes on (a "continue" into a full
//!   window would fill it again); filled again right after that compaction, the run ends;
//! - paused (`pause_turn`): the turn goes on with a "continue";
//! - a word no table knows: the answer is taken as final, and the run says so.
//!
//! Every one is an `output.incomplete` event (`action`: `continue`, `compact`, `fail` or
//! `accept`).

use super::{Agent, Outcome, RunState};
use crate::context::compaction::CONTINUE_MESSAGE;
use crate::conversation::Message;
use crate::events::{Event, IncompleteAction};
use crate::provider::{AssistantTurn, FinishReason, ProviderError};

/// What a response's stop reason asks of the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CutAction {
    /// Ask the model once to go on (output limit).
    Continue,
    /// Cut again after a "continue": the run ends.
    Truncated,
    /// A safety stop, with the server's word.
    Filtered(String),
    /// The context window filled, with the server's word: compact, then go on.
    Compact(String),
    /// A paused turn: go on.
    Resume,
    /// A stop word no table knows: the answer is final, and the run says so.
    Unknown(String),
}

/// What the loop remembers between cut answers.
#[derive(Debug, Default)]
pub(super) struct Cuts {
    /// The text of an answer cut or paused, while the model continues it.
    pub(super) head: Option<String>,
    /// A "continue" after the output limit was already asked for.
    pub(super) continued: bool,
    /// The last turn ended in a compaction for a full window.
    pub(super) window_compacted: bool,
}

/// The action for `response`, or `None` when it ended normally. A response that asked for
/// tools goes on as usual (its calls are checked and answered like any other), unless a
/// safety system stopped it.
pub(super) fn stop_action(response: &AssistantTurn, cuts: &Cuts) -> Option<CutAction> {
    let calls = !response.tool_calls.is_empty();
    match response.finish.as_ref()? {
        FinishReason::ContentFilter(word) => Some(CutAction::Filtered(word.clone())),
        _ if calls => None,
        FinishReason::Length if cuts.continued => Some(CutAction::Truncated),
        FinishReason::Length => Some(CutAction::Continue),
        FinishReason::ContextWindow(word) => Some(CutAction::Compact(word.clone())),
        FinishReason::Pause => Some(CutAction::Resume),
        FinishReason::Other(word) => Some(CutAction::Unknown(word.clone())),
        FinishReason::Stop | FinishReason::ToolCalls | FinishReason::Failed(_) => None,
    }
}

impl Agent<'_> {
    /// Acts on a stop reason: `None` when the loop goes on, else the run's outcome.
    pub(super) async fn after_cut(
        &mut self,
        turn: u32,
        action: CutAction,
        state: &mut RunState,
        cuts: &mut Cuts,
    ) -> Option<Outcome> {
        let (stop_reason, what) = match &action {
            CutAction::Continue => ("length".to_owned(), IncompleteAction::Continue),
            CutAction::Truncated => ("length".to_owned(), IncompleteAction::Fail),
            CutAction::Filtered(_) => ("content_filter".to_owned(), IncompleteAction::Fail),
            CutAction::Compact(word) => (word.clone(), IncompleteAction::Compact),
            CutAction::Resume => ("pause_turn".to_owned(), IncompleteAction::Continue),
            CutAction::Unknown(word) => (word.clone(), IncompleteAction::Accept),
        };
        self.emitter.emit(Event::OutputIncomplete {
            turn,
            stop_reason: stop_reason.clone(),
            action: what,
        });
        match action {
            CutAction::Continue | CutAction::Resume => {
                cuts.continued |= action == CutAction::Continue;
                cuts.head = Some(state.final_text.clone());
                self.append(state, Message::user(CONTINUE_MESSAGE));
                self.hooks.after_turn(turn, state).await;
                self.turn_completed(turn, state);
                None
            }
            CutAction::Compact(word) => self.compact_full_window(turn, &word, state, cuts).await,
            CutAction::Unknown(word) => {
                self.emitter.emit(Event::Warning {
                    message: format!(
                        "the model stopped for a reason cn-run does not know (stop reason: \
                         {word}); its answer is taken as final"
                    ),
                });
                self.hooks.answered(turn, state).await;
                self.turn_completed(turn, state);
                Some(Outcome::Completed)
            }
            CutAction::Filtered(word) => {
                self.hooks.answered(turn, state).await;
                self.turn_completed(turn, state);
                Some(Outcome::Filtered(format!(
                    "the provider's content filter stopped the answer (stop reason: {word})"
                )))
            }
            CutAction::Truncated => {
                self.hooks.answered(turn, state).await;
                self.turn_completed(turn, state);
                Some(Outcome::Truncated(
                    "the answer was cut by the output-token limit twice (stop reason: length); \
                     raise model.max_tokens or --max-tokens"
                        .to_owned(),
                ))
            }
        }
    }

    /// The context window filled while the model answered: compact (the partial answer is
    /// part of what the summary covers) and go on. Filled again right after such a
    /// compaction, the run ends: the window cannot hold the work.
    async fn compact_full_window(
        &mut self,
        turn: u32,
        word: &str,
        state: &mut RunState,
        cuts: &mut Cuts,
    ) -> Option<Outcome> {
        self.hooks.after_turn(turn, state).await;
        if cuts.window_compacted {
            self.turn_completed(turn, state);
            return Some(Outcome::Provider(ProviderError::ContextLength(format!(
                "the model's context window filled again right after a compaction (stop \
                 reason: {word})"
            ))));
        }
        let compacted = self.keep_in_window(turn, state, true).await;
        self.turn_completed(turn, state);
        if let Err(outcome) = compacted {
            return Some(self.stopped().unwrap_or(outcome));
        }
        cuts.window_compacted = true;
        None
    }
}
