//! Folds the stream events of one response into an [`AssistantTurn`]: text concatenated,
//! tool-call fragments grouped by index, usage and finish reason kept.
//!
//! Providers differ in how they fragment tool calls (OpenAI repeats nothing after the first
//! fragment, some compatible servers repeat the id, some reuse an index for a second call),
//! so the grouping rules live here, once, for every provider.

use crate::conversation::{ToolCall, Usage};
use crate::provider::sse::http::MAX_RESPONSE_BYTES;
use crate::provider::{AssistantTurn, FinishReason, ProviderError, StreamEvent};

/// Bytes charged per event on top of its text, so a flood of empty events is bounded too.
const EVENT_OVERHEAD: usize = 16;

#[derive(Debug, Default)]
struct PartialCall {
    index: usize,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Accumulates one response.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    text: String,
    calls: Vec<PartialCall>,
    /// The position in `calls` of the latest call with each index (a scan of `calls` per
    /// fragment made a response with many calls quadratic).
    latest: std::collections::HashMap<usize, usize>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    bytes: usize,
}

impl Assembler {
    /// Adds one event; returns the text delta it carried, if any, for the caller to show.
    pub(crate) fn push(&mut self, event: StreamEvent) -> Result<Option<String>, ProviderError> {
        self.bytes += EVENT_OVERHEAD;
        match event {
            StreamEvent::TextDelta(text) => {
                self.charge(text.len())?;
                self.text.push_str(&text);
                return Ok(Some(text));
            }
            StreamEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => {
                let size = arguments.len()
                    + id.as_deref().map_or(0, str::len)
                    + name.as_deref().map_or(0, str::len);
                self.charge(size)?;
                self.tool_delta(index, id, name, &arguments);
            }
            StreamEvent::Usage(usage) => self.usage = Some(usage),
            StreamEvent::Finish(reason) => self.finish = Some(reason),
            StreamEvent::KeepAlive => {}
        }
        self.charge(0)?;
        Ok(None)
    }

    fn charge(&mut self, size: usize) -> Result<(), ProviderError> {
        self.bytes += size;
        if self.bytes > MAX_RESPONSE_BYTES {
            return Err(ProviderError::Decode(format!(
                "the response exceeds {} MiB",
                MAX_RESPONSE_BYTES >> 20
            )));
        }
        Ok(())
    }

    fn tool_delta(
        &mut self,
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: &str,
    ) {
        let current = self.latest.get(&index).copied();
        let starts_new = match (current, &id) {
            (None, _) => true,
            (Some(pos), Some(new_id)) => {
                self.calls[pos].id.as_ref().is_some_and(|old| old != new_id)
            }
            (Some(_), None) => false,
        };
        let pos = if starts_new {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            self.latest.insert(index, self.calls.len() - 1);
            self.calls.len() - 1
        } else {
            current.unwrap_or_default()
        };
        let call = &mut self.calls[pos];
        if call.id.is_none() {
            call.id = id.filter(|id| !id.is_empty());
        }
        if let Some(name) = name
            && call.name.is_empty()
        {
            call.name = name;
        }
        call.arguments.push_str(arguments);
    }

    /// The finished turn. Calls without an id get `call_<n>`; calls without a name are
    /// dropped (nothing could run them); empty arguments become `{}`.
    pub(crate) fn finish(self) -> AssistantTurn {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (n, call) in self.calls.into_iter().enumerate() {
            if call.name.trim().is_empty() {
                tracing::warn!(
                    index = call.index,
                    arguments = %call.arguments,
                    "dropping a tool call that has no name"
                );
                continue;
            }
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            tool_calls.push(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{n}")),
                name: call.name,
                arguments,
            });
        }
        AssistantTurn {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish: self.finish,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Assembler;
    use crate::provider::{FinishReason, StreamEvent};

    fn delta(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> StreamEvent {
        StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: args.to_string(),
        }
    }

    fn assemble(events: Vec<StreamEvent>) -> crate::provider::AssistantTurn {
        let mut asm = Assembler::default();
        for event in events {
            asm.push(event).unwrap();
        }
        asm.finish()
    }

    #[test]
    fn fragments_are_grouped_by_index_and_concatenated() {
        let turn = assemble(vec![
            StreamEvent::TextDelta("Let me ".into()),
            delta(0, Some("a"), Some("Read"), "{\"file"),
            delta(1, Some("b"), Some("List"), ""),
            delta(0, None, None, "path\": \"x\"}"),
            delta(1, None, None, "{\"dirpath\": \".\"}"),
            StreamEvent::TextDelta("look.".into()),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]);
        assert_eq!(turn.text, "Let me look.");
        let got: Vec<_> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", "Read", "{\"filepath\": \"x\"}"),
                ("b", "List", "{\"dirpath\": \".\"}")
            ]
        );
        assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn a_new_id_at_a_used_index_starts_a_new_call_and_a_repeated_id_does_not() {
        let turn = assemble(vec![
            delta(0, Some("a"), Some("Read"), "{}"),
            delta(0, Some("b"), Some("Bash"), "{\"command\":"),
            delta(0, Some("b"), Some("Bash"), "\"ls\"}"),
        ]);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[1].arguments, "{\"command\":\"ls\"}");
    }

    #[test]
    fn missing_ids_are_generated_nameless_calls_dropped_and_empty_arguments_are_an_object() {
        let turn = assemble(vec![
            delta(0, None, Some("Exit"), ""),
            delta(1, Some("x"), None, "{\"a\":1}"),
            delta(
                2,
                Some(""),
                Some("Checklist"),
                "{\"checklist\":\"- [ ] a\"}",
            ),
        ]);
        let got: Vec<_> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("call_0", "Exit", "{}"),
                ("call_2", "Checklist", "{\"checklist\":\"- [ ] a\"}")
            ]
        );
    }

    #[test]
    fn an_endless_response_is_refused() {
        let mut asm = Assembler::default();
        let piece = "x".repeat(1 << 20);
        let result =
            (0..40).try_for_each(|_| asm.push(StreamEvent::TextDelta(piece.clone())).map(|_| ()));
        assert_eq!(result.unwrap_err().kind(), "decode");
    }
}
