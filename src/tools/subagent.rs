//! The Subagent tool: hand a focused task to a named nested agent (declared in the job's
//! `subagents:`), which runs its own loop with its own history and returns its last
//! message. The loop itself lives in `app` (a [`SubagentRunner`]): this tool only knows
//! the seam. Nested agents never get wider permissions than the run, and what they spend
//! counts toward the run's limits.

use std::sync::Arc;

use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolOutput, str_arg};
use crate::catalog;
use crate::conversation::{ToolSpec, Usage};
use crate::job::Limits;

/// What a nested agent spent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spent {
    pub turns: u32,
    pub usage: Usage,
    /// `None`: unknown price.
    pub cost_usd: Option<f64>,
}

/// How a nested agent's run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentReport {
    pub text: String,
    pub completed: bool,
    /// Why it stopped, in words (`the agent finished`, `limit reached: …`).
    pub reason: String,
    pub spent: Spent,
}

/// Why a subagent could not be run (the run ends with an internal error, `ToolError::Fatal`).
#[derive(Debug, thiserror::Error)]
pub enum SubagentError {
    #[error("no subagent {0}")]
    Unknown(String),
    /// Its `tools:` patterns do not make a policy.
    #[error("subagent {name}: {source}")]
    Policy {
        name: String,
        source: crate::permissions::PolicyError,
    },
}

/// Runs a nested agent (implemented by the composition root).
#[async_trait::async_trait]
pub trait SubagentRunner: Send + Sync {
    /// Run the subagent `call` names on its task.
    async fn run(&self, call: SubagentCall<'_>) -> Result<SubagentReport, SubagentError>;
}

/// One call of a subagent: run `name` on `task`; its events are tagged with
/// `parent_call_id`; it may spend at most `remaining`.
pub struct SubagentCall<'a> {
    pub name: &'a str,
    pub task: &'a str,
    pub parent_call_id: &'a str,
    pub remaining: Option<Limits>,
}

pub struct SubagentTool {
    /// (name, description) of every subagent the job declares.
    pub agents: Vec<(String, String)>,
    pub runner: Arc<dyn SubagentRunner>,
}

super::catalogued!(SubagentTool => catalog::SUBAGENT);

#[async_trait::async_trait]
impl Tool for SubagentTool {
    /// The catalogue's description with the job's agents listed.
    fn spec(&self) -> ToolSpec {
        let mut spec = catalog::SUBAGENT.spec();
        for (name, about) in &self.agents {
            spec.description.push_str(&format!("- {name}: {about}\n"));
        }
        spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = str_arg(&args, "subagent_name")?;
        let prompt = str_arg(&args, "prompt")?;
        if !self.agents.iter().any(|(n, _)| n == name) {
            let names: Vec<&str> = self.agents.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ToolError::RespondToModel(format!(
                "No subagent named `{name}`. Available: {}.",
                names.join(", ")
            )));
        }
        let report = self
            .runner
            .run(SubagentCall {
                name,
                task: prompt,
                parent_call_id: &ctx.call_id,
                remaining: ctx.shared.remaining(),
            })
            .await
            .map_err(|e| ToolError::Fatal(e.to_string()))?;
        ctx.shared.record_spent(report.spent.clone());
        let status = if report.completed {
            "completed"
        } else {
            "failed"
        };
        let content = format!(
            "{}\n<task_metadata>\nagent: {name}\nstatus: {status}\nreason: {}\nturns: {}\n</task_metadata>",
            report.text.trim(),
            report.reason,
            report.spent.turns
        );
        if report.completed {
            Ok(ToolOutput::text(content))
        } else {
            Err(ToolError::RespondToModel(content))
        }
    }
}
