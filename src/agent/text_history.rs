//! The history in text form (`model.tool_call_format: text`), kept between requests: each
//! request converts only the messages added since the one before, so a turn's own cost
//! does not grow with the run (converting a 2.4 MB history whole took ~1.5 ms per turn at
//! turn 300: `FORMAT=text benches/session_turns.sh`). A history rewritten since (a
//! compaction) is converted again whole.

use std::sync::{Mutex, PoisonError};

use super::text_tools;
use crate::conversation::Message;

/// The text form of the history as of the last request.
#[derive(Debug, Default)]
pub struct TextHistory {
    cached: Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    /// How many messages of the history `text` is the form of.
    source_len: usize,
    /// The last of them, to notice a rewritten history.
    last: Option<Message>,
    text: Vec<Message>,
}

impl TextHistory {
    /// The text form of `history`, taken out of the cache (give it back with
    /// [`keep`](Self::keep) once the request is sent).
    pub(super) fn take(&self, history: &[Message]) -> Vec<Message> {
        let cached = std::mem::take(&mut *self.lock());
        let prefix = cached.source_len <= history.len()
            && cached.source_len.checked_sub(1).map(|i| &history[i]) == cached.last.as_ref();
        let (mut text, from) = if prefix {
            (cached.text, cached.source_len)
        } else {
            (Vec::new(), 0)
        };
        text_tools::extend_text_history(&mut text, &history[from..]);
        debug_assert!(
            text == text_tools::to_text_history(history),
            "the kept text form drifted from the history"
        );
        text
    }

    /// Keeps `text`, the form of `history`, for the next request.
    pub(super) fn keep(&self, history: &[Message], text: Vec<Message>) {
        *self.lock() = Cached {
            source_len: history.len(),
            last: history.last().cloned(),
            text,
        };
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "Read".into(),
            arguments: "{\"filepath\":\"a\"}".into(),
        }
    }

    fn result(id: &str) -> Message {
        Message::Tool {
            tool_call_id: id.into(),
            name: "Read".into(),
            content: format!("contents for {id}"),
            is_error: false,
            images: Vec::new(),
        }
    }

    /// Each step's text form, kept between steps, equals the history converted whole:
    /// growth by turns, results of one response arriving in two requests, a compaction.
    #[test]
    fn the_kept_form_is_the_whole_conversion_through_growth_and_a_rewrite() {
        let cache = TextHistory::default();
        let mut history = vec![Message::user("task")];
        let step = |history: &[Message]| {
            let text = cache.take(history);
            assert_eq!(text, text_tools::to_text_history(history));
            cache.keep(history, text);
        };
        step(&history);
        for turn in 0..4 {
            let (a, b) = (format!("a{turn}"), format!("b{turn}"));
            history.push(Message::assistant("", vec![call(&a), call(&b)]));
            history.push(result(&a));
            step(&history);
            history.push(result(&b));
            step(&history);
        }
        // A compaction: the task and a summary, shorter than before.
        history = vec![
            Message::user("task"),
            Message::assistant("summary", Vec::new()),
        ];
        step(&history);
        // A rewrite of the same length with a different last message.
        history[1] = Message::assistant("another summary", Vec::new());
        step(&history);
        history.push(Message::user("go on"));
        step(&history);
    }
}
