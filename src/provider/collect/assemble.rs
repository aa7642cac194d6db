//! Folds the stream events of one response into an [`AssistantTurn`]: text concatenated,
//! tool-call fragments grouped into calls, reasoning state, usage and finish reason kept.
//!
//! Providers differ in how they fragment tool calls (OpenAI repeats nothing after the first
//! fragment, some compatible servers repeat the id, some reuse an index for a second call),
//! so the grouping rules live here, once, for every provider.

use std::collections::HashMap;

use serde_json::Value;

use crate::conversation::{CallExtra, Reasoning, ThinkingBlock, ToolCall, Usage};
use crate::provider::sse::http::MAX_RESPONSE_BYTES;
use crate::provider::{AssistantTurn, FinishReason, ProviderError, StreamEvent};

/// Bytes charged per event on top of its text, so a flood of empty events is bounded too.
const EVENT_OVERHEAD: usize = 16;

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<usize>,
    id: Option<String>,
    name: String,
    arguments: String,
    extra: Option<Value>,
}

/// Accumulates one response.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    text: String,
    calls: Vec<PartialCall>,
    /// The position in `calls` of the latest call with each index, and of the call with each
    /// id (a scan of `calls` per fragment made a response with many calls quadratic).
    by_index: HashMap<usize, usize>,
    by_id: HashMap<String, usize>,
    reasoning: String,
    reasoning_field: Option<&'static str>,
    thinking: Vec<ThinkingBlock>,
    details: Vec<Value>,
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
            StreamEvent::ReasoningDelta { text, field } => {
                self.charge(text.len())?;
                self.reasoning.push_str(&text);
                self.reasoning_field.get_or_insert(field);
            }
            StreamEvent::Thinking(block) => {
                let size = match &block {
                    ThinkingBlock::Thinking {
                        thinking,
                        signature,
                    } => thinking.len() + signature.len(),
                    ThinkingBlock::RedactedThinking { data } => data.len(),
                };
                self.charge(size)?;
                self.thinking.push(block);
            }
            StreamEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments,
                extra,
            } => {
                let size = arguments.len()
                    + id.as_deref().map_or(0, str::len)
                    + name.as_deref().map_or(0, str::len)
                    + extra.as_ref().map_or(0, |e| e.to_string().len());
                self.charge(size)?;
                let id = id.filter(|id| !id.is_empty());
                let named = name.as_deref().is_some_and(|n| !n.is_empty());
                let pos = self.call_for(index, id.as_deref(), named);
                let call = &mut self.calls[pos];
                if call.id.is_none()
                    && let Some(id) = id
                {
                    self.by_id.insert(id.clone(), pos);
                    call.id = Some(id);
                }
                if let Some(name) = name.filter(|n| !n.is_empty())
                    && call.name.is_empty()
                {
                    call.name = name;
                }
                call.arguments.push_str(&arguments);
                if extra.is_some() {
                    call.extra = extra;
                }
            }
            StreamEvent::ReasoningDetail(piece) => {
                self.charge(piece.to_string().len())?;
                super::details::merge(&mut self.details, piece);
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

    /// The position of the call a fragment belongs to, opening a new one when it starts one.
    ///
    /// With an `index` (the protocol's identifier) the fragment continues the latest call at
    /// that index; an empty or repeated id does not start a call (DashScope sends `""` on
    /// every continuation), only a different non-empty id does (servers that reuse index 0).
    /// Without an `index` (Gemini) the id identifies the call; a fragment with neither
    /// continues the latest call, unless it names a tool while that call already has a name
    /// (servers that send whole calls with neither).
    fn call_for(&mut self, index: Option<usize>, id: Option<&str>, named: bool) -> usize {
        let found = match (index, id) {
            (Some(i), _) => self.by_index.get(&i).copied().filter(|&pos| {
                match (id, self.calls[pos].id.as_deref()) {
                    (Some(new), Some(old)) => new == old,
                    _ => true,
                }
            }),
            (None, Some(id)) => self.by_id.get(id).copied(),
            (None, None) => self
                .calls
                .len()
                .checked_sub(1)
                .filter(|&last| !named || self.calls[last].name.is_empty()),
        };
        found.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            let pos = self.calls.len() - 1;
            if let Some(i) = index {
                self.by_index.insert(i, pos);
            }
            pos
        })
    }

    /// The finished turn. Calls without an id get `call_<n>`; calls without a name are
    /// dropped (nothing could run them); empty arguments become `{}`.
    pub(crate) fn finish(self) -> AssistantTurn {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        let mut call_extra = Vec::new();
        for (n, call) in self.calls.into_iter().enumerate() {
            if call.name.trim().is_empty() {
                tracing::warn!(
                    index = ?call.index,
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
            let id = call.id.unwrap_or_else(|| format!("call_{n}"));
            if let Some(extra) = call.extra {
                call_extra.push(CallExtra {
                    call_id: id.clone(),
                    extra,
                });
            }
            tool_calls.push(ToolCall {
                id,
                name: call.name,
                arguments,
            });
        }
        AssistantTurn {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish: self.finish,
            reasoning: Reasoning {
                text: self.reasoning,
                field: self.reasoning_field.unwrap_or_default().to_owned(),
                blocks: self.thinking,
                call_extra,
                details: self.details,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Assembler;
    use crate::provider::{FinishReason, StreamEvent};

    fn delta(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> StreamEvent {
        piece(Some(index), id, name, args)
    }

    fn no_index(id: Option<&str>, name: Option<&str>, args: &str) -> StreamEvent {
        piece(None, id, name, args)
    }

    fn piece(
        index: Option<usize>,
        id: Option<&str>,
        name: Option<&str>,
        args: &str,
    ) -> StreamEvent {
        StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: args.to_string(),
            extra: None,
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
        assert_eq!(
            calls(&turn),
            these(&[
                ("a", "Read", "{\"filepath\": \"x\"}"),
                ("b", "List", "{\"dirpath\": \".\"}")
            ])
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
        assert_eq!(
            calls(&turn),
            these(&[
                ("call_0", "Exit", "{}"),
                ("call_2", "Checklist", "{\"checklist\":\"- [ ] a\"}")
            ])
        );
    }

    fn calls(turn: &crate::provider::AssistantTurn) -> Vec<(String, String, String)> {
        turn.tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect()
    }

    /// The calls as `calls` gives them.
    fn these(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
        let owned = |(id, name, args): &(&str, &str, &str)| {
            (id.to_string(), name.to_string(), args.to_string())
        };
        list.iter().map(owned).collect()
    }

    fn one(id: &str, name: &str, args: &str) -> Vec<(String, String, String)> {
        these(&[(id, name, args)])
    }

    #[test]
    fn an_empty_id_on_continuation_chunks_is_not_a_new_call() {
        // DashScope (Qwen), Z.ai, Workers AI: `"id": ""` and `"name": ""` after the first piece.
        let turn = assemble(vec![
            delta(0, Some("call_q1"), Some("Read"), "{\"file"),
            delta(0, Some(""), Some(""), "path\": "),
            delta(0, Some(""), None, "\"a.txt\"}"),
        ]);
        assert_eq!(
            calls(&turn),
            one("call_q1", "Read", "{\"filepath\": \"a.txt\"}")
        );
    }

    #[test]
    fn a_repeated_id_and_name_on_every_chunk_is_one_call() {
        // Some vLLM tool parsers and proxies repeat id and name with each piece.
        let turn = assemble(vec![
            delta(0, Some("c"), Some("Bash"), "{\"command\":"),
            delta(0, Some("c"), Some("Bash"), " \"ls\"}"),
            delta(1, Some("d"), Some("List"), "{}"),
            delta(1, Some("d"), Some("List"), ""),
        ]);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].arguments, "{\"command\": \"ls\"}");
    }

    #[test]
    fn without_an_index_the_id_identifies_the_call() {
        // Gemini's OpenAI-compatible endpoint: whole calls, an id each, no index.
        let turn = assemble(vec![
            no_index(Some("g1"), Some("Read"), "{\"filepath\":\"a\"}"),
            no_index(Some("g2"), Some("Read"), "{\"filepath\":\"b\"}"),
        ]);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[1].id, "g2");
        // Pieces without index or id continue the latest call.
        let turn = assemble(vec![
            no_index(Some("x"), Some("Bash"), "{\"command\""),
            no_index(None, None, ": \"pwd\"}"),
        ]);
        assert_eq!(calls(&turn), one("x", "Bash", "{\"command\": \"pwd\"}"));
    }

    #[test]
    fn whole_calls_with_neither_index_nor_id_stay_apart() {
        let turn = assemble(vec![
            no_index(None, Some("Read"), "{\"filepath\":\"a\"}"),
            no_index(None, Some("List"), "{\"dirpath\":\".\"}"),
        ]);
        let names: Vec<_> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Read", "List"]);
        assert_ne!(turn.tool_calls[0].id, turn.tool_calls[1].id);
    }

    #[test]
    fn the_last_argument_piece_may_come_with_the_finish() {
        let turn = assemble(vec![
            delta(0, Some("v"), Some("Read"), "{\"filepath\""),
            delta(0, None, None, ": \"z\"}"),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]);
        assert_eq!(calls(&turn), one("v", "Read", "{\"filepath\": \"z\"}"));
        assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn reasoning_is_kept_apart_from_the_answer_with_the_call_extras() {
        let extra = serde_json::json!({"google": {"thought_signature": "sig=="}});
        let turn = assemble(vec![
            StreamEvent::ReasoningDelta {
                text: "Let me think. ".into(),
                field: "reasoning",
            },
            StreamEvent::ReasoningDelta {
                text: "Read it.".into(),
                field: "reasoning",
            },
            StreamEvent::TextDelta("Reading.".into()),
            StreamEvent::ToolCallDelta {
                index: None,
                id: Some("g".into()),
                name: Some("Read".into()),
                arguments: "{}".into(),
                extra: Some(extra.clone()),
            },
        ]);
        assert_eq!(turn.text, "Reading.");
        assert_eq!(turn.reasoning.text, "Let me think. Read it.");
        assert_eq!(turn.reasoning.field, "reasoning");
        assert_eq!(turn.reasoning.extra_for("g"), Some(&extra));
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
