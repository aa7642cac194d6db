//! The points of a run where hooks fire, one method each, with the event's own input
//! fields: tool calls (PreToolUse, PostToolUse), the task (UserPromptSubmit), the end of
//! the agent's work (Stop, SubagentStop), the run's start and end (SessionStart,
//! SessionEnd), compaction (PreCompact) and calls waiting for a person (Notification).

use serde_json::Value;

use super::config::HookEvent;
use super::gate::HookAnswer;
use super::input::{fields, tool_fields, tool_response};
use super::{Hooks, names};
use crate::events::Emitter;

impl Hooks {
    fn cwd(&self) -> std::path::PathBuf {
        self.at
            .as_ref()
            .map(|(c, _)| c.cwd.clone())
            .unwrap_or_default()
    }

    /// Before `tool` runs with `args`; a rewritten input comes back in cn-run's names.
    pub async fn pre_tool_use(
        &self,
        tool: &str,
        args: &Value,
        call_id: &str,
        emitter: &Emitter,
    ) -> HookAnswer {
        if !self.has(HookEvent::PreToolUse) {
            return HookAnswer::default();
        }
        let f = tool_fields(tool, args, call_id, &self.cwd());
        let names = names::names_of(tool);
        let mut answer = self
            .fire(
                HookEvent::PreToolUse,
                Some(&names),
                f,
                Some(call_id),
                emitter,
            )
            .await;
        answer.updated_input = answer.updated_input.map(|v| names::cn_input(tool, &v));
        answer
    }

    /// After `tool` ran with `args` and answered `output`.
    pub async fn post_tool_use(
        &self,
        tool: &str,
        args: &Value,
        call_id: &str,
        output: &str,
        is_error: bool,
        emitter: &Emitter,
    ) -> HookAnswer {
        if !self.has(HookEvent::PostToolUse) {
            return HookAnswer::default();
        }
        let mut f = tool_fields(tool, args, call_id, &self.cwd());
        let response = tool_response(&f, output, is_error);
        f.insert("tool_response".into(), response);
        let names = names::names_of(tool);
        self.fire(
            HookEvent::PostToolUse,
            Some(&names),
            f,
            Some(call_id),
            emitter,
        )
        .await
    }

    /// The task (or a resume's new instruction) is about to go to the model.
    pub async fn user_prompt_submit(&self, prompt: &str, emitter: &Emitter) -> HookAnswer {
        let f = fields([("prompt", prompt.into())]);
        self.fire(HookEvent::UserPromptSubmit, None, f, None, emitter)
            .await
    }

    /// The agent answered without a tool call; `active` when a Stop hook already sent it
    /// back once in this run.
    pub async fn stop(&self, active: bool, emitter: &Emitter) -> HookAnswer {
        let f = fields([("stop_hook_active", active.into())]);
        self.fire(HookEvent::Stop, None, f, None, emitter).await
    }

    /// The run starts (`startup`) or is resumed (`resume`).
    pub async fn session_start(&self, source: &str, emitter: &Emitter) -> HookAnswer {
        let f = fields([("source", source.into())]);
        self.fire(HookEvent::SessionStart, Some(&[source]), f, None, emitter)
            .await
    }

    /// The run ends; `reason` says how (`other` when it simply finished).
    pub async fn session_end(&self, reason: &str, emitter: &Emitter) {
        let f = fields([("reason", reason.into())]);
        self.fire(HookEvent::SessionEnd, None, f, None, emitter)
            .await;
    }

    /// The history is about to be compacted (`auto`: near the context limit; cn-run has
    /// no manual compaction, so `custom_instructions` is empty). The answer's context is
    /// the hooks' plain stdout: instructions for the summary, as Claude Code takes them.
    pub async fn pre_compact(&self, trigger: &str, emitter: &Emitter) -> HookAnswer {
        if !self.has(HookEvent::PreCompact) {
            return HookAnswer::default();
        }
        let f = fields([
            ("trigger", trigger.into()),
            ("custom_instructions", "".into()),
        ]);
        self.fire(HookEvent::PreCompact, Some(&[trigger]), f, None, emitter)
            .await
    }

    /// cn-run needs a person (a call waits for approval).
    pub async fn notification(&self, message: &str, emitter: &Emitter) {
        let f = fields([
            ("message", message.into()),
            ("notification_type", "permission_prompt".into()),
        ]);
        self.fire(
            HookEvent::Notification,
            Some(&["permission_prompt"]),
            f,
            None,
            emitter,
        )
        .await;
    }
}
