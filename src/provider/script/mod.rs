//! `provider: script` — replays assistant turns from a YAML or JSON file, with no network.
//!
//! It makes every job testable without an API key: each request takes the next turn of the
//! script, streamed as the same events a real provider produces (text in pieces, tool-call
//! fragments, usage, finish), so the assembly, retry and agent code all run for real. An
//! `error` turn injects a provider failure; `delay_ms` makes a turn slow. The format accepts
//! the benchmark's scenario files as they are (JSON is YAML; `@name` tool references).

mod format;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use serde_json::Value;

use super::{
    ChatRequest, EventStream, FinishReason, ModelClient, ModelInfo, ProviderError, StreamEvent,
};
use crate::conversation::{ToolSpec, Usage};
use format::{ErrorKind, Turn};

/// A model that answers from a script.
#[derive(Debug)]
pub struct ScriptClient {
    turns: Vec<Turn>,
    next: AtomicUsize,
    /// Whether the first request has been seen (see [`ScriptClient::resume_point`]).
    primed: AtomicBool,
    model: String,
}

impl ScriptClient {
    /// Loads a script file.
    pub fn from_file(path: &Path, model: impl Into<String>) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Script(format!("cannot read {}: {e}", path.display())))?;
        Self::from_str(&text, model)
            .map_err(|e| ProviderError::Script(format!("{}: {}", path.display(), script_text(e))))
    }

    /// Parses a script from YAML or JSON text.
    pub fn from_str(text: &str, model: impl Into<String>) -> Result<Self, ProviderError> {
        Ok(ScriptClient {
            turns: format::parse(text)?,
            next: AtomicUsize::new(0),
            primed: AtomicBool::new(false),
            model: model.into(),
        })
    }

    /// How many turns the script has.
    /// Where a process that starts in the middle of a conversation (a resumed run) picks
    /// up: after the turns that produced the assistant messages already in the history
    /// (error turns produce none and are skipped too).
    fn resume_point(&self, request: &ChatRequest<'_>) -> usize {
        let answered = request
            .messages
            .iter()
            .filter(|m| matches!(m, crate::conversation::Message::Assistant { .. }))
            .count();
        if answered == 0 {
            return 0;
        }
        let mut seen = 0;
        for (i, turn) in self.turns.iter().enumerate() {
            if turn.error.is_none() {
                seen += 1;
                if seen == answered {
                    return i + 1;
                }
            }
        }
        self.turns.len()
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }
}

fn script_text(err: ProviderError) -> String {
    match err {
        ProviderError::Script(text) => text,
        other => other.to_string(),
    }
}

#[async_trait::async_trait]
impl ModelClient for ScriptClient {
    async fn stream(&self, request: &ChatRequest<'_>) -> Result<EventStream, ProviderError> {
        if !self.primed.swap(true, Ordering::SeqCst) {
            self.next
                .store(self.resume_point(request), Ordering::SeqCst);
        }
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(turn) = self.turns.get(n) else {
            return Err(ProviderError::Script(format!(
                "the script has no turn left for request {} (it has {} turns)",
                n + 1,
                self.turns.len()
            )));
        };
        if let Some(ms) = turn.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        let events = turn_events(turn, n + 1, &request.tools);
        let Some(error) = &turn.error else {
            return Ok(Box::pin(stream::iter(events.into_iter().map(Ok))));
        };
        let text_only = events
            .into_iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .map(Ok);
        match error.kind {
            ErrorKind::Network => {
                let message = error
                    .message
                    .clone()
                    .unwrap_or_else(|| "connection reset by peer (scripted)".to_string());
                let failure = std::iter::once(Err(ProviderError::Network(message)));
                Ok(Box::pin(stream::iter(text_only.chain(failure))))
            }
            ErrorKind::Stalled => Ok(Box::pin(stream::iter(text_only).chain(stream::pending()))),
            _ => Err(error.to_provider_error()),
        }
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: "script".into(),
            model: self.model.clone(),
        }
    }
}

/// The turn as stream events: text in pieces, each tool call as an opening fragment and
/// argument pieces, usage, finish.
fn turn_events(turn: &Turn, request: usize, tools: &[ToolSpec]) -> Vec<StreamEvent> {
    let mut events: Vec<StreamEvent> = pieces(turn.text.as_deref().unwrap_or(""))
        .into_iter()
        .map(|piece| StreamEvent::TextDelta(piece.to_string()))
        .collect();
    for (index, call) in turn.tool_calls.iter().enumerate() {
        let arguments = match &call.arguments {
            None | Some(Value::Null) => "{}".to_string(),
            Some(Value::String(raw)) => raw.clone(),
            Some(other) => other.to_string(),
        };
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{request}_{index}"));
        let mut parts = pieces(&arguments).into_iter();
        events.push(StreamEvent::ToolCallDelta {
            index: Some(index),
            id: Some(id),
            name: Some(resolve_name(&call.name, tools)),
            arguments: parts.next().unwrap_or_default().to_string(),
            extra: None,
        });
        events.extend(parts.map(|part| StreamEvent::ToolCallDelta {
            index: Some(index),
            id: None,
            name: None,
            arguments: part.to_string(),
            extra: None,
        }));
    }
    if let Some(usage) = turn.usage {
        events.push(StreamEvent::Usage(Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
        }));
    }
    let finish = match (&turn.finish, turn.tool_calls.is_empty()) {
        (Some(reason), _) => openai_finish(reason),
        (None, true) => FinishReason::Stop,
        (None, false) => FinishReason::ToolCalls,
    };
    events.push(StreamEvent::Finish(finish));
    events
}

/// A scripted stop word, read as a server's (`stop_words.rs`).
fn openai_finish(reason: &str) -> FinishReason {
    super::stop_words::finish_reason(reason)
}

/// Up to three pieces of `text`, cut at character boundaries.
fn pieces(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let size = text.len().div_ceil(3).max(1);
    let mut out = Vec::with_capacity(3);
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    out
}

/// `@read` → the offered tool named `Read` (exact match, ignoring case, else the first
/// offered name containing it). Other names are used as written.
fn resolve_name(name: &str, tools: &[ToolSpec]) -> String {
    let Some(wanted) = name.strip_prefix('@') else {
        return name.to_string();
    };
    let lower = wanted.to_lowercase();
    let exact = tools.iter().find(|t| t.name.to_lowercase() == lower);
    let partial = || {
        tools
            .iter()
            .find(|t| t.name.to_lowercase().contains(&lower))
    };
    if let Some(tool) = exact.or_else(partial) {
        tool.name.clone()
    } else {
        tracing::warn!(name, "no offered tool matches the scripted tool name");
        wanted.to_string()
    }
}

#[cfg(test)]
mod tests;
