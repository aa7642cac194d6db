//! The compaction planner: when to compact, what to send for the summary, what replaces
//! the history afterwards, and how to prune when even that does not fit.
//!
//! It exists so a run of hundreds of turns never dies of a full context window. The rules
//! follow Continue's `cn`: compact once the request reaches context − max_tokens − buffer
//! (buffer = min(max(max_tokens, 20 % of the rest), 15 000)); the model summarises the
//! whole history; the summary, one assistant message, replaces everything, followed by one
//! user turn ([`RESUME_MESSAGE`]) so the next request ends with the user, as every server
//! wants. Pure logic: the agent loop calls the model and emits the `compaction` event.
//!
//! Tool calls and their results are kept together everywhere: the unit of pruning is a
//! *group* — a user message, or an assistant message followed by the tool results that
//! answer it — so no request ever carries a tool result without its call.

use crate::context::tokens::TokenCounter;
use crate::conversation::Message;

/// The buffer below the context limit never exceeds this.
pub const AUTO_COMPACT_BUFFER_CAP: u64 = 15_000;
/// The buffer is at least this share (percent) of context − max_tokens.
const BUFFER_SHARE_PERCENT: u64 = 20;
/// Tokens kept free by [`fits`] on top of the reply's `max_tokens`.
pub const SAFETY_BUFFER: u64 = 100;
/// `max_tokens` when the model sets none: 35 % of the context, at most this.
const DEFAULT_MAX_TOKENS_CAP: u64 = 64_000;
/// Added once as a user message when the model stops right after a compaction.
pub const CONTINUE_MESSAGE: &str = "continue";
/// The user turn after the summary. A history that ends with the assistant's summary is a
/// request every strict server refuses (Claude Opus 4.6+: "This model does not support
/// assistant message prefill"; Mistral, code 3230: "Expected last role User or Tool") and
/// one that other models read as a prefill to continue instead of work to act on.
pub const RESUME_MESSAGE: &str = "The conversation above was replaced by this summary to fit \
the context window. Carry on with the task from where the summary says it stands: take the \
next step now.";
/// Never cut a message below this many bytes when shrinking it to fit.
const MIN_KEPT_BYTES: usize = 512;

/// Appended as the last user message of the summary request.
pub const COMPACTION_PROMPT: &str = "The context window is nearly full. This conversation \
will now be replaced by a summary that you write, and you will carry on from that summary \
alone (the system prompt stays). Write it as a single message addressed to yourself: the task \
as it was given, with every constraint; what has been done, naming the files changed, the \
commands run and what they showed; the decisions made and why; what failed or is still \
unknown; and precisely where the work stands — the step in progress and the very next \
action. Quote paths, identifiers and error messages exactly. Do not call any tool in this reply.";

/// The input size at which a request should be compacted first, or `None` when the model's
/// window leaves no room (context ≤ max_tokens + buffer).
///
/// Example: context 200 000, max_tokens 64 000 → 121 000.
pub fn threshold(context_length: u64, max_tokens: u64) -> Option<u64> {
    let rest = context_length.checked_sub(max_tokens)?;
    let share = (rest * BUFFER_SHARE_PERCENT).div_ceil(100);
    let buffer = max_tokens.max(share).min(AUTO_COMPACT_BUFFER_CAP);
    rest.checked_sub(buffer).filter(|&t| t > 0)
}

/// Whether a request of `input_tokens` leaves room for the reply: input + max_tokens (35 %
/// of the context when 0) + [`SAFETY_BUFFER`] ≤ context.
pub fn fits(input_tokens: u64, max_tokens: u64, context_length: u64) -> bool {
    let reply = if max_tokens > 0 {
        max_tokens
    } else {
        (context_length * 35).div_ceil(100)
    };
    input_tokens
        .saturating_add(reply)
        .saturating_add(SAFETY_BUFFER)
        <= context_length
}

/// `max_tokens` for a model that sets none: 35 % of the context, at most 64 000.
pub fn default_max_tokens(context_length: u64) -> u64 {
    (context_length * 35)
        .div_ceil(100)
        .min(DEFAULT_MAX_TOKENS_CAP)
}

/// The tokens the summary request's messages may use: context − max_tokens − `fixed`
/// (system prompt + tool list, as counted) − [`SAFETY_BUFFER`].
pub fn summary_budget(context_length: u64, max_tokens: u64, fixed: u64) -> u64 {
    context_length.saturating_sub(
        max_tokens
            .saturating_add(fixed)
            .saturating_add(SAFETY_BUFFER),
    )
}

/// The messages to send for the summary: `history` plus [`COMPACTION_PROMPT`] as a user
/// message, within `budget_tokens` (see [`summary_budget`]).
///
/// When the whole history does not fit, the oldest groups are left out (a short user note
/// says so) and the result never starts with a tool result nor holds one without its call.
/// When even the newest group does not fit, the middle of its longest texts is cut.
pub fn compaction_request(
    history: &[Message],
    budget_tokens: u64,
    counter: &mut TokenCounter,
) -> Vec<Message> {
    compaction_request_with(history, budget_tokens, counter, "")
}

/// [`compaction_request`] with `instructions` (a PreCompact hook's) added to the prompt.
pub fn compaction_request_with(
    history: &[Message],
    budget_tokens: u64,
    counter: &mut TokenCounter,
    instructions: &str,
) -> Vec<Message> {
    let prompt = Message::user(match instructions.trim() {
        "" => COMPACTION_PROMPT.to_owned(),
        extra => format!("{COMPACTION_PROMPT}\n\nAdditional instructions:\n{extra}"),
    });
    if history.is_empty() {
        return vec![prompt];
    }
    let counts = counter.per_message(history);
    let prompt_tokens = counter.count_message(&prompt);
    let note_tokens = counter.count_message(&omission_note(history.len()));
    let starts = group_starts(history);
    let mut suffix: u64 = counts.iter().sum();
    let mut chosen = None;
    for (k, &start) in starts.iter().enumerate() {
        let extra = if start == 0 { 0 } else { note_tokens };
        let first_ok = !matches!(history[start], Message::Tool { .. });
        if first_ok && suffix + prompt_tokens + extra <= budget_tokens {
            chosen = Some(start);
            break;
        }
        let end = starts.get(k + 1).copied().unwrap_or(history.len());
        suffix -= counts[start..end].iter().sum::<u64>();
    }
    let start = chosen.unwrap_or_else(|| starts.last().copied().unwrap_or(0));
    let mut out = Vec::with_capacity(history.len() - start + 2);
    if start > 0 {
        out.push(omission_note(start));
    }
    out.extend_from_slice(&history[start..]);
    if chosen.is_none() {
        let room = budget_tokens.saturating_sub(prompt_tokens);
        shrink_to_fit(&mut out, room, counter);
    }
    out.push(prompt);
    out
}

/// What follows the task after a compaction: the summary, as an assistant message marked
/// `summary`, and the user turn that asks the model to carry on ([`RESUME_MESSAGE`]); the
/// system prompt is not part of the history.
pub fn apply_summary(summary: String) -> Vec<Message> {
    vec![
        Message::Assistant {
            content: summary,
            tool_calls: Vec::new(),
            summary: true,
            reasoning: crate::conversation::Reasoning::default(),
        },
        Message::user(RESUME_MESSAGE),
    ]
}

/// Drops the oldest groups of `history` until `fits` accepts it. The group holding the
/// last user message and the newest group are never dropped, so the result may still not
/// fit; the caller then has nothing left to prune.
pub fn prune_to_fit(history: &mut Vec<Message>, mut fits: impl FnMut(&[Message]) -> bool) {
    while !fits(history) {
        let starts = group_starts(history);
        let last_user = history
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }));
        let protected = last_user.map(|u| starts.partition_point(|&s| s <= u) - 1);
        let Some(group) = (0..starts.len() - 1).find(|&g| Some(g) != protected) else {
            return;
        };
        let end = starts[group + 1];
        history.drain(starts[group]..end);
    }
}

/// Whether every tool result answers a call of the nearest preceding assistant message
/// (with only tool results in between), and every call is answered exactly once before the
/// next user or assistant message (or the end).
pub fn is_well_paired(messages: &[Message]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for message in messages {
        match message {
            Message::Tool { tool_call_id, .. } => {
                match pending.iter().position(|id| id == tool_call_id) {
                    Some(i) => drop(pending.swap_remove(i)),
                    None => return false,
                }
            }
            Message::User { .. } | Message::Assistant { .. } if !pending.is_empty() => {
                return false;
            }
            Message::User { .. } => {}
            Message::Assistant { tool_calls, .. } => {
                pending = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
    }
    pending.is_empty()
}

/// The "continue once" rule: after a compaction, if the model's next reply ends the turn
/// (no tool calls), one user message [`CONTINUE_MESSAGE`] is added and the loop goes on.
#[derive(Debug, Default, Clone)]
pub struct AutoContinue {
    armed: bool,
}

impl AutoContinue {
    /// Call after each compaction.
    pub fn compacted(&mut self) {
        self.armed = true;
    }

    /// Call after each model reply; returns the message to append when the reply stopped
    /// right after a compaction. Disarms either way.
    pub fn after_reply(&mut self, stopped: bool) -> Option<Message> {
        let armed = std::mem::take(&mut self.armed);
        (armed && stopped).then(|| Message::user(CONTINUE_MESSAGE))
    }
}

/// Indices where a group starts: every user or assistant message, and 0 (a leading run of
/// tool results, which has no call, forms a group of its own).
fn group_starts(messages: &[Message]) -> Vec<usize> {
    let mut starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i == 0 || !matches!(m, Message::Tool { .. }))
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        starts.push(0);
    }
    starts
}

fn omission_note(dropped: usize) -> Message {
    Message::user(format!(
        "[{dropped} earlier messages of this conversation were left out to fit the context window.]"
    ))
}

/// Cuts the middle out of the longest texts of `messages` until they count ≤ `room`
/// tokens, or nothing is left to cut. Tool-call arguments are never cut (they must stay
/// valid JSON).
fn shrink_to_fit(messages: &mut [Message], room: u64, counter: &mut TokenCounter) {
    let mut counts: Vec<u64> = messages.iter().map(|m| counter.count_message(m)).collect();
    for _ in 0..4 * messages.len() {
        let total: u64 = counts.iter().sum();
        if total <= room {
            return;
        }
        let Some(i) = (0..messages.len())
            .filter(|&i| messages[i].text().len() > MIN_KEPT_BYTES)
            .max_by_key(|&i| messages[i].text().len())
        else {
            return;
        };
        let text_tokens = counter.count_text(messages[i].text()).max(1);
        let over = total - room;
        let keep_tokens = text_tokens.saturating_sub(over + over / 10 + 16);
        let len = messages[i].text().len();
        let keep = (len as u128 * u128::from(keep_tokens) / u128::from(text_tokens)) as usize;
        cut_middle(&mut messages[i], keep.max(MIN_KEPT_BYTES).min(len / 2));
        counts[i] = counter.count_message(&messages[i]);
    }
}

/// Keeps `keep` bytes of the message text (head and tail halves) around a marker.
fn cut_middle(message: &mut Message, keep: usize) {
    let (Message::User { content }
    | Message::Assistant { content, .. }
    | Message::Tool { content, .. }) = message;
    let head = content.floor_char_boundary(keep / 2);
    let tail = content.ceil_char_boundary(content.len() - keep / 2);
    let cut = tail - head;
    *content = format!(
        "{}\n[… {cut} bytes cut here to fit the context window …]\n{}",
        &content[..head],
        &content[tail..]
    );
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;
