//! Points where the composition root plugs into the loop without the loop knowing what is
//! behind them: saving the session after every turn, checkpointing after changes.

use super::RunState;

#[async_trait::async_trait]
pub trait AgentHooks: Send + Sync {
    /// After each turn, once its tool results are in the history.
    async fn after_turn(&self, _turn: u32, _state: &RunState) {}

    /// After a tool call that may have changed the workspace.
    async fn after_mutation(&self, _turn: u32, _call_id: &str, _tool: &str) {}
}

/// Hooks that do nothing.
pub struct NoHooks;

impl AgentHooks for NoHooks {}
