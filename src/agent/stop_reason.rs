//! Stop reasons are outcomes: an answer the model did not finish is not a success.
//!
//! A final answer cut by the output-token limit (`finish_reason: "length"`, Anthropic
//! `max_tokens`) gets one "continue" turn, as Continue does after a compaction; cut again, the
//! run ends as [`Outcome::Truncated`]. A content-filter stop ends the run as
//! [`Outcome::Filtered`]. Both are events (`output.incomplete`).

use super::{Agent, Outcome, RunState};
use crate::context::compaction::CONTINUE_MESSAGE;
use crate::conversation::Message;
use crate::events::Event;
use crate::provider::{AssistantTurn, FinishReason};

/// What a response's stop reason asks of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CutAction {
    /// Ask the model once to go on.
    Continue,
    /// Cut again after a "continue": the run ends.
    Truncated,
    Filtered,
}

/// The action for `response`, or `None` when it ended normally. A cut response that asked
/// for tools goes on as usual (its calls are checked and answered like any other).
pub(super) fn stop_action(response: &AssistantTurn, already_continued: bool) -> Option<CutAction> {
    match response.finish.as_ref()? {
        FinishReason::ContentFilter => Some(CutAction::Filtered),
        FinishReason::Length if response.tool_calls.is_empty() => Some(if already_continued {
            CutAction::Truncated
        } else {
            CutAction::Continue
        }),
        _ => None,
    }
}

impl Agent<'_> {
    /// Acts on a cut or filtered answer: `None` when the loop goes on with a "continue".
    pub(super) async fn after_cut(
        &self,
        turn: u32,
        action: CutAction,
        state: &mut RunState,
    ) -> Option<Outcome> {
        let (stop_reason, what) = match action {
            CutAction::Continue => ("length", "continue"),
            CutAction::Truncated => ("length", "fail"),
            CutAction::Filtered => ("content_filter", "fail"),
        };
        self.emitter.emit(Event::OutputIncomplete {
            turn,
            stop_reason: stop_reason.to_owned(),
            action: what.to_owned(),
        });
        if action == CutAction::Continue {
            self.append(state, Message::user(CONTINUE_MESSAGE));
            self.hooks.after_turn(turn, state).await;
            self.turn_completed(turn, state);
            return None;
        }
        self.hooks.answered(turn, state).await;
        self.turn_completed(turn, state);
        Some(match action {
            CutAction::Filtered => Outcome::Filtered(
                "the provider's content filter stopped the answer (stop reason: content_filter)"
                    .to_owned(),
            ),
            _ => Outcome::Truncated(
                "the answer was cut by the output-token limit twice (stop reason: length); \
                 raise model.max_tokens or --max-tokens"
                    .to_owned(),
            ),
        })
    }
}
