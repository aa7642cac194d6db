//! The nested agents of a job (`subagents:`), run in-process by the Subagent tool: each
//! gets its own conversation and system message, the run's tools minus Subagent (one
//! level only), a policy that is the run's narrowed by its own `tools:` list — never
//! wider — and what is left of the run's budget. Its events are tagged with the call id
//! of the Subagent call; changes it makes are checkpointed like the run's own.

use std::path::PathBuf;
use std::sync::Arc;

use super::checkpoints::Checkpoints;
use crate::agent::{
    Agent, AgentConfig, AgentHooks, Budget, ContextWindow, Outcome, RunState, StopSignal,
    SystemPrompt,
};
use crate::conversation::Message;
use crate::events::Emitter;
use crate::job::file::SubagentSection;
use crate::permissions::{Mode, Permission, Policy, PolicyInput, RuleSpec};
use crate::provider::ModelClient;
use crate::redact::Redactor;
use crate::rules::{Applies, RuleDef};
use crate::tools::{
    Spent, SubagentCall, SubagentError, SubagentReport, SubagentRunner, ToolRegistry, ToolShared,
};

/// Everything a nested agent borrows from the run.
pub(crate) struct Subagents {
    pub defs: Vec<SubagentSection>,
    pub client: Arc<dyn ModelClient>,
    /// The run's tools, without Subagent.
    pub tools: ToolRegistry,
    pub policy: Arc<Policy>,
    pub shared: Arc<ToolShared>,
    pub emitter: Arc<Emitter>,
    pub redactor: Redactor,
    pub stop: StopSignal,
    pub config: AgentConfig,
    pub workspace: PathBuf,
    pub mode: Mode,
    /// Where repository instructions come from (see `repo_files`).
    pub repo_files: crate::repo_files::RepoFiles,
    pub context_length: u64,
    pub checkpoints: Option<Arc<Checkpoints>>,
    /// The run's hooks, for a nested agent (its Stop hooks fire as SubagentStop).
    pub user_hooks: crate::hooks::Hooks,
}

/// A subagent's own policy: its `tools:` patterns allowed, everything else excluded.
pub(crate) fn narrow_policy(
    def: &SubagentSection,
    workspace: &std::path::Path,
) -> Result<Option<Policy>, SubagentError> {
    let Some(tools) = &def.tools else {
        return Ok(None);
    };
    let input = PolicyInput {
        job: tools
            .iter()
            .map(|t| RuleSpec::new(t.clone(), Permission::Allow))
            .collect(),
        repo: vec![RuleSpec::new("*", Permission::Exclude)],
        repo_file: Some(format!("subagent {}", def.name)),
        ..PolicyInput::default()
    };
    Policy::build(input, workspace)
        .map(Some)
        .map_err(|source| SubagentError::Policy {
            name: def.name.clone(),
            source,
        })
}

/// Hooks of a nested agent: only checkpoints (its conversation is not the session's).
struct NestedHooks(Option<Arc<Checkpoints>>);

#[async_trait::async_trait]
impl AgentHooks for NestedHooks {
    async fn before_changes(&self) {
        if let Some(c) = &self.0 {
            c.ready();
        }
    }

    async fn after_mutation(&self, turn: u32, call_id: &str, tool: &str, args: &serde_json::Value) {
        if let Some(c) = &self.0 {
            c.after_call(turn, call_id, tool, args);
        }
    }
}

fn outcome_words(outcome: &Outcome) -> (bool, String) {
    match outcome {
        Outcome::Completed => (true, "the agent finished".to_owned()),
        Outcome::Failed(r) | Outcome::Rejected(r) => (false, format!("it reported failure: {r}")),
        Outcome::ApprovalRequired(r) => (false, r.clone()),
        Outcome::Limit(l) => (false, format!("limit reached: {}", l.as_str())),
        Outcome::Provider(e) => (false, format!("model provider failed: {e}")),
        Outcome::Internal(m) => (false, format!("internal error: {m}")),
        Outcome::Interrupted => (false, "interrupted".to_owned()),
        Outcome::Truncated(r) | Outcome::Filtered(r) => (false, r.clone()),
    }
}

#[async_trait::async_trait]
impl SubagentRunner for Subagents {
    async fn run(&self, call: SubagentCall<'_>) -> Result<SubagentReport, SubagentError> {
        let SubagentCall {
            name,
            task,
            parent_call_id,
            remaining,
        } = call;
        let def = self
            .defs
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| SubagentError::Unknown(name.to_owned()))?;
        let narrow = narrow_policy(def, &self.workspace)?;
        let mut tools = self.tools.clone();
        tools.retain(|t| narrow.as_ref().is_none_or(|n| n.is_offered(t.name())));
        let emitter = self.emitter.scoped(parent_call_id);
        let instructions = RuleDef {
            name: format!("subagent {name}"),
            origin: crate::events::RuleOrigin::Job,
            text: def.system_prompt.clone(),
            applies: Applies::Always,
        };
        let mut limits = remaining.unwrap_or_default();
        if let Some(own) = def.max_turns {
            limits.max_turns = Some(limits.max_turns.map_or(own, |m| m.min(own)));
        }
        let mut config = self.config.clone();
        if let Some(model) = &def.model {
            config.model = model.clone();
        }
        let hooks = NestedHooks(self.checkpoints.clone());
        let mut system = SystemPrompt::build(
            &self.workspace,
            self.mode,
            vec![instructions],
            false,
            &self.repo_files,
        );
        if let Some(text) = config.trust.instructions() {
            system.add(text);
        }
        let mut agent = Agent {
            client: self.client.as_ref(),
            tools: &tools,
            policy: &self.policy,
            shared: self.shared.clone(),
            emitter: &emitter,
            redactor: &self.redactor,
            stop: self.stop.clone(),
            window: Some(ContextWindow::new(
                &config.model,
                self.context_length,
                config.max_tokens.map(u64::from),
            )),
            config,
            system,
            hooks: &hooks,
            rules: Vec::new(),
            narrow: narrow.as_ref(),
            text_history: crate::agent::TextHistory::default(),
            user_hooks: &self.user_hooks,
        };
        let mut state = RunState::new(Vec::new(), Budget::new(limits));
        agent.append(&mut state, Message::user(task));
        let outcome = agent.run(&mut state).await;
        let (completed, reason) = outcome_words(&outcome);
        Ok(SubagentReport {
            text: state.final_text,
            completed,
            reason,
            spent: Spent {
                turns: state.budget.turns,
                usage: state.budget.usage,
                cost_usd: state.budget.cost_usd,
            },
        })
    }
}

/// The Subagent tool for `defs`, or nothing when the job declares none.
pub(crate) fn tool(
    defs: &[SubagentSection],
    runner: Arc<Subagents>,
) -> Option<crate::tools::SubagentTool> {
    if defs.is_empty() {
        return None;
    }
    let agents = defs
        .iter()
        .map(|d| (d.name.clone(), d.description.clone()))
        .collect();
    Some(crate::tools::SubagentTool { agents, runner })
}
