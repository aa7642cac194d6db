//! Points where the composition root plugs into the loop without the loop knowing what is
//! behind them: checkpointing around changes. (The session log is not kept here: it is
//! a fold of the event stream.)

use super::RunState;

#[async_trait::async_trait]
pub trait AgentHooks: Send + Sync {
    /// The model's response, with tool calls, is in the history; the calls have not run
    /// yet. (A response without calls goes straight to [`after_turn`](Self::after_turn).)
    async fn after_response(&self, _turn: u32, _state: &RunState) {}

    /// A tool call is streaming in (not run yet): changes may come soon. Called from
    /// the stream, so it must not block.
    fn changes_coming(&self) {}

    /// Tool calls or checks are about to run: from here on the workspace may change.
    async fn before_changes(&self) {}

    /// As [`before_changes`](Self::before_changes), for a turn whose calls that may change
    /// files are `calls` (tool name, arguments) and nothing else runs with them.
    async fn before_named_changes(&self, calls: &[(String, serde_json::Value)]) {
        let _ = calls;
        self.before_changes().await;
    }

    /// A tool call that ran has its result (on the event stream already).
    async fn tool_finished(&self, _turn: u32, _call_id: &str) {}

    /// After a tool call that may have changed the workspace; `args` are the call's
    /// arguments (the files a Write or Edit names).
    async fn after_mutation(
        &self,
        _turn: u32,
        _call_id: &str,
        _tool: &str,
        _args: &serde_json::Value,
    ) {
    }

    /// After a turn's calls that may have changed the workspace, `(call id, tool,
    /// arguments)` each, handed in once every call of the turn is done, in call order: a
    /// checkpoint taken while another call of the turn still runs would write to `.git`
    /// under a command that copies, replaces or removes it (`cp -r .git`, `rm -rf .git`
    /// then failing), and what the run leaves behind would depend on the timing.
    async fn after_mutations(&self, turn: u32, ran: &[(&str, &str, &serde_json::Value)]) {
        for (call_id, tool, args) in ran {
            self.after_mutation(turn, call_id, tool, args).await;
        }
    }

    /// After each turn, once its tool results are in the history.
    async fn after_turn(&self, _turn: u32, _state: &RunState) {}

    /// The model answered without tool calls: the loop ends here. By default the same
    /// as [`after_turn`](Self::after_turn).
    async fn answered(&self, turn: u32, state: &RunState) {
        self.after_turn(turn, state).await;
    }
}

/// Hooks that do nothing.
pub struct NoHooks;

impl AgentHooks for NoHooks {}
