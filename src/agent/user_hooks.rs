//! The loop's side of hooks (Claude Code's protocol, `crate::hooks`): where a call's
//! PreToolUse answer (or a person's approval) meets the policy, where PostToolUse output
//! joins a call's result, where Stop hooks may send the agent back to work, and the run's
//! first hooks (SessionStart, UserPromptSubmit). The policy itself is decided as before.

use serde_json::Value;

use super::{Agent, Outcome, RunState};
use crate::conversation::{Message, ToolCall};
use crate::events::Resolution;
use crate::hooks::{Gated, HookAnswer, approved, combine};
use crate::job::OnAsk;
use crate::permissions::{Decision, Permission, needs_a_named_rule};
use crate::tools::{Judged, Tool};

/// What the Stop hooks made of the agent's answer.
pub(super) enum StopHook {
    /// The run ends here, as the agent wanted.
    Finish,
    /// A hook blocked the stop: its reason goes to the agent, which works on.
    GoOn(String),
    /// A hook said `continue: false`: the run ends with this outcome.
    Halt(Outcome),
}

/// What the PreCompact hooks made of a compaction about to start.
pub(super) enum PreCompact {
    /// Compact, with these added instructions for the summary (may be empty).
    Go(String),
    /// A hook blocked it: the history stays as it is this time.
    Skip,
    /// A hook said `continue: false`: the run ends with this outcome.
    Halt(Outcome),
}

impl Agent<'_> {
    /// The policy's decision on `args` (judged once: the policy and the run see the same
    /// path or addresses).
    pub(super) fn decide(&self, tool: &dyn Tool, name: &str, args: &Value) -> (Judged, Decision) {
        let judged = tool.judge(args, &self.shared);
        let mut decision = self.policy.check(name, args, judged.tighten.clone());
        if let Some(refusal) = self.egress_refusal(tool, name, args) {
            decision = refusal;
        }
        if let Some(narrow) = self.narrow {
            let own = narrow.check(name, args, judged.tighten.clone());
            if own.permission > decision.permission {
                decision = own;
            }
        }
        (judged, decision)
    }

    /// The policy's decision on a call, with its PreToolUse hooks' answer (or a person's
    /// answer to a deferred call) applied; a rewritten input replaces `args` and is judged
    /// by the policy anew. Also a stop a hook asked for.
    pub(super) async fn gate(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        args: &mut Value,
    ) -> (Gated, Judged, Option<Outcome>) {
        let (mut judged, mut decision) = self.decide(tool, &call.name, args);
        if let Some(approval) = self.user_hooks.approval(&call.id) {
            return (approved(decision, approval), judged, None);
        }
        let answer = self
            .user_hooks
            .pre_tool_use(&call.name, args, &call.id, self.emitter)
            .await;
        if let Some(new) = answer.updated_input.clone().filter(Value::is_object) {
            *args = new;
            (judged, decision) = self.decide(tool, &call.name, args);
        }
        let stop = halt("PreToolUse", &answer);
        (combine(decision, &answer), judged, stop)
    }

    /// The decision to record and what the call gets: `ask` resolves by `on_ask`.
    fn resolve_ask(&self, gated: Gated) -> (Decision, Resolution) {
        match gated {
            Gated::Policy(d) | Gated::Asks(d) => {
                let r = match d.permission {
                    Permission::Allow => Resolution::Allowed,
                    Permission::Exclude => Resolution::Denied,
                    Permission::Ask => match self.config.on_ask {
                        // `.git` (hooks, config) and writes outside the workspace need a
                        // rule naming them: neither `on_ask: allow` nor a person later is one.
                        OnAsk::Allow | OnAsk::Defer
                            if d.rule.as_deref().is_some_and(needs_a_named_rule) =>
                        {
                            Resolution::Denied
                        }
                        OnAsk::Allow => Resolution::Allowed,
                        OnAsk::Deny => Resolution::Denied,
                        OnAsk::Fail => Resolution::Failed,
                        OnAsk::Defer => Resolution::Deferred,
                    },
                };
                (d, r)
            }
            Gated::Refused(d) => (d, Resolution::Denied),
            Gated::Answered(d) => (d, Resolution::Allowed),
            Gated::Defer(d) => (d, Resolution::Deferred),
        }
    }

    /// [`resolve_ask`](Self::resolve_ask), where a nested agent cannot defer: its
    /// conversation is not the session a resume continues, so a deferral is a denial.
    pub(super) fn resolve(&self, gated: Gated) -> (Decision, Resolution) {
        match self.resolve_ask(gated) {
            (d, Resolution::Deferred) if self.user_hooks.is_nested() => (d, Resolution::Denied),
            other => other,
        }
    }

    /// Notification hooks: a call waits for a person.
    pub(super) async fn notify_person(&self, tool: &str) {
        let message = format!("cn-run needs your permission to use {tool}");
        self.user_hooks.notification(&message, self.emitter).await;
    }

    /// PostToolUse hooks of a call that ran: a block's reason and added context join
    /// the result the model reads; `continue: false` stops the run.
    pub(super) async fn after_tool_hooks(
        &self,
        call: &ToolCall,
        args: &Value,
        mut content: String,
        is_error: bool,
        control: Option<Outcome>,
    ) -> (String, Option<Outcome>) {
        let answer = self
            .user_hooks
            .post_tool_use(&call.name, args, &call.id, &content, is_error, self.emitter)
            .await;
        if answer.said == Some(crate::hooks::output::HookDecision::Block) {
            let reason = answer.reason.clone().unwrap_or_default();
            content.push_str(&format!("\n\n[PostToolUse hook] {reason}"));
        }
        for text in &answer.context {
            content.push_str(&format!("\n\n[PostToolUse hook context] {text}"));
        }
        (content, control.or_else(|| halt("PostToolUse", &answer)))
    }

    /// Stop hooks, once the agent answered without calling a tool.
    pub(super) async fn stop_hooks(&self, state: &mut RunState) -> StopHook {
        let answer = self
            .user_hooks
            .stop(state.stop_hook_active, self.emitter)
            .await;
        if let Some(outcome) = halt("Stop", &answer) {
            return StopHook::Halt(outcome);
        }
        if answer.said == Some(crate::hooks::output::HookDecision::Block) {
            state.stop_hook_active = true;
            let reason = answer.reason.unwrap_or_default();
            return StopHook::GoOn(format!(
                "A Stop hook did not let you finish yet: {reason}\nKeep working, then finish \
                 again with a final answer."
            ));
        }
        StopHook::Finish
    }

    /// PreCompact hooks, before an automatic compaction: their plain stdout is added to
    /// the summary's instructions; a block (exit 2, `decision: block`) skips this
    /// compaction, said in a warning; `continue: false` ends the run.
    pub(super) async fn pre_compact_hooks(&self) -> PreCompact {
        let answer = self.user_hooks.pre_compact("auto", self.emitter).await;
        if let Some(outcome) = halt("PreCompact", &answer) {
            return PreCompact::Halt(outcome);
        }
        if answer.said == Some(crate::hooks::output::HookDecision::Block) {
            let reason = answer.reason.unwrap_or_default();
            self.emitter.emit(crate::events::Event::Warning {
                message: format!("a PreCompact hook blocked the compaction: {reason}"),
            });
            return PreCompact::Skip;
        }
        PreCompact::Go(answer.context.join("\n"))
    }

    /// The run's first hooks: SessionStart (`startup` or `resume`), then
    /// UserPromptSubmit with the task (a new run) or the resume's new instruction. Added
    /// context joins the conversation; a blocked task ends the run before the model is
    /// asked.
    pub async fn run_started(&self, state: &mut RunState) -> Option<Outcome> {
        let resumed = state
            .history
            .iter()
            .any(|m| matches!(m, Message::Assistant { .. }));
        let source = if resumed { "resume" } else { "startup" };
        let start = self.user_hooks.session_start(source, self.emitter).await;
        self.add_context(state, "SessionStart", &start.context);
        if let Some(outcome) = halt("SessionStart", &start) {
            return Some(outcome);
        }
        let prompt = match (&state.follow_up, resumed) {
            (Some(m), _) => m.text().to_owned(),
            (None, false) => state.history.iter().rev().find_map(user_text)?,
            (None, true) => return None,
        };
        let answer = self
            .user_hooks
            .user_prompt_submit(&prompt, self.emitter)
            .await;
        if let Some(outcome) = halt("UserPromptSubmit", &answer) {
            return Some(outcome);
        }
        if answer.said == Some(crate::hooks::output::HookDecision::Block) {
            let reason = answer.reason.unwrap_or_default();
            return Some(Outcome::Failed(format!(
                "a UserPromptSubmit hook blocked the task: {reason}"
            )));
        }
        self.add_context(state, "UserPromptSubmit", &answer.context);
        None
    }

    fn add_context(&self, state: &mut RunState, event: &str, context: &[String]) {
        if context.is_empty() {
            return;
        }
        let text = format!("[{event} hook context]\n{}", context.join("\n"));
        match state.follow_up.take() {
            Some(m) => state.follow_up = Some(Message::user(format!("{}\n\n{text}", m.text()))),
            None => self.append(state, Message::user(text)),
        }
    }
}

/// The outcome of a hook's `continue: false`.
fn halt(event: &str, answer: &HookAnswer) -> Option<Outcome> {
    let reason = answer.stop.as_ref()?;
    Some(Outcome::Failed(format!(
        "a {event} hook stopped the run (continue: false): {reason}"
    )))
}

fn user_text(m: &Message) -> Option<String> {
    match m {
        Message::User { .. } => Some(m.text().to_owned()),
        _ => None,
    }
}
