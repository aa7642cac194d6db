//! The one place a model request is built, for the turns and for the compaction summary
//! alike: the system prompt, the tools as the model takes them (native, or described in the
//! system prompt when `model.tool_call_format: text`) and the history in that same form.
//! Two builders drifted apart once: text-format jobs sent native tools when compacting.

use std::borrow::Cow;

use crate::conversation::{Message, ToolSpec};
use crate::provider::ChatRequest;

use super::{Agent, text_tools};

impl Agent<'_> {
    /// The system prompt and the native tool list exactly as a request sends them.
    pub(super) fn request_frame(&self) -> (String, Vec<ToolSpec>) {
        let mut system = self.system.render();
        let tools = self.tools.specs();
        if !self.config.text_tools {
            return (system, tools);
        }
        system.push_str("\n\n");
        system.push_str(&text_tools::instructions(&tools));
        (system, Vec::new())
    }

    /// A request carrying `messages` (the history, borrowed, or the summary request's
    /// messages).
    pub(super) fn build_request<'m>(
        &self,
        messages: impl Into<Cow<'m, [Message]>>,
    ) -> ChatRequest<'m> {
        let messages = messages.into();
        let messages = if self.config.text_tools {
            Cow::Owned(text_tools::to_text_history(&messages))
        } else {
            messages
        };
        self.framed_request(messages)
    }

    /// A request carrying `messages` as they are (already in the form the model takes).
    pub(super) fn framed_request<'m>(&self, messages: Cow<'m, [Message]>) -> ChatRequest<'m> {
        let (system, tools) = self.request_frame();
        ChatRequest {
            model: self.config.model.clone(),
            system,
            messages,
            tools,
            max_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
        }
    }
}
