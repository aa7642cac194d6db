//! Step 5 of a run: its tools — the built-in tools the policy offers, the workspace's skills,
//! the MCP servers' tools (trimmed to what the provider accepts), and the Subagent tool.

use std::sync::Arc;

use super::checkpoints::Checkpoints;
use super::guard::Guard;
use super::place::Placed;
use super::setup;
use crate::agent::StopSignal;
use crate::config::RunConfig;
use crate::events::Emitter;
use crate::job::Job;
use crate::mcp::{McpHub, ServerStatus};
use crate::permissions::Policy;
use crate::provider::ModelClient;
use crate::redact::Redactor;
use crate::tools::{ToolLimits, ToolRegistry, ToolShared};

/// The run's tool set and the policy that covers it (MCP tools included).
pub(crate) struct Tools {
    pub registry: ToolRegistry,
    pub policy: Arc<Policy>,
    pub hub: Option<McpHub>,
    pub statuses: Vec<ServerStatus>,
    /// An MCP server the run needs did not start.
    pub failure: Option<String>,
}

/// The shared parts of a run that subagents and the session hooks hold too.
pub(crate) struct Base<'a> {
    pub client: &'a Arc<dyn ModelClient>,
    pub shared: &'a Arc<ToolShared>,
    pub emitter: &'a Arc<Emitter>,
    pub redactor: &'a Redactor,
    pub stop: &'a StopSignal,
    pub checkpoints: &'a Option<Arc<Checkpoints>>,
    pub session: &'a crate::session::SessionSink,
}

/// Built-in tools the policy offers, the workspace's skills, the MCP servers' tools, trimmed
/// to what the provider accepts.
pub(crate) async fn tools(
    config: &RunConfig,
    placed: &Placed,
    guard: &mut Guard,
    shared: &ToolShared,
    mcp: Vec<crate::mcp::ServerConfig>,
) -> Tools {
    let job = config.job();
    let untrusted = config.trust().untrusted;
    let mut registry = setup::registry(&guard.policy, &job.model.name);
    guard.warnings.extend(super::extensions::register_skills(
        job,
        &placed.workspace,
        &mut registry,
        &guard.policy,
        &guard.repo_files,
    ));
    let traced = (untrusted, placed.trace.clone());
    let started =
        super::extensions::start_mcp(mcp, &shared.env, &mut registry, &guard.policy, traced).await;
    let (hub, statuses, failure, policy) = match started {
        Ok((hub, statuses, p)) => (hub, statuses, None, Arc::new(p)),
        Err(e) => (None, Vec::new(), Some(e.to_string()), guard.policy.clone()),
    };
    let reserve = usize::from(!job.subagents.is_empty());
    guard.warnings.extend(crate::tools::offer_limit::trim(
        &mut registry,
        job.model.provider,
        reserve,
    ));
    Tools {
        registry,
        policy,
        hub,
        statuses,
        failure,
    }
}

/// The Subagent tool, when the job defines subagents and the policy offers it.
pub(crate) fn add_subagents(
    config: &RunConfig,
    placed: &Placed,
    guard: &Guard,
    tools: &mut Tools,
    (base, user_hooks): (&Base<'_>, &crate::hooks::Hooks),
) {
    let job = config.job();
    if job.subagents.is_empty() || !tools.policy.is_offered(crate::catalog::SUBAGENT.name) {
        return;
    }
    let runner = Arc::new(super::subagents::Subagents {
        defs: job.subagents.clone(),
        client: base.client.clone(),
        tools: tools.registry.clone(),
        policy: tools.policy.clone(),
        shared: base.shared.clone(),
        emitter: base.emitter.clone(),
        redactor: base.redactor.clone(),
        stop: base.stop.clone(),
        config: config.agent().clone(),
        workspace: placed.workspace.clone(),
        mode: tools.policy.mode(),
        repo_files: guard.repo_files.clone(),
        context_length: config.context_length().0,
        checkpoints: base.checkpoints.clone(),
        user_hooks: user_hooks.nested(),
    });
    if let Some(tool) = super::subagents::tool(&job.subagents, runner) {
        tools.registry.register(Arc::new(tool));
    }
}

pub(crate) fn tool_limits(job: &Job) -> ToolLimits {
    let mut l = ToolLimits::default();
    if let Some(t) = job.tools.bash_timeout {
        l.bash_default_timeout = t.min(l.bash_max_timeout);
    }
    if let Some(c) = job.tools.bash_max_chars {
        l.bash_max_chars = c;
    }
    if let Some(n) = job.tools.bash_max_lines {
        l.bash_max_lines = n;
    }
    l
}
