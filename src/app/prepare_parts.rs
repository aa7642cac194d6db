//! The steps of `prepare` that build on a placed run: its tools (built-in, skills, MCP,
//! subagents), its conversation and session, the events that announce it, and the system
//! prompt.

use std::sync::Arc;

use super::checkpoints::Checkpoints;
use super::prepare::{Guard, Placed};
use super::run_parts::{job_record, system_prompt};
use super::session_hooks::SessionHooks;
use super::setup;
use super::start_error::RunError;
use crate::agent::{Budget, RunState, StopSignal, SystemPrompt};
use crate::config::RunConfig;
use crate::conversation::Message;
use crate::events::{Emitter, Event, now};
use crate::mcp::{McpHub, ServerStatus};
use crate::permissions::Policy;
use crate::provider::ModelClient;
use crate::redact::Redactor;
use crate::session::{SESSION_VERSION, Session};
use crate::tools::{ToolRegistry, ToolShared};
use crate::upload::UploaderHandle;

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
    let job = &config.job;
    let untrusted = config.trust.untrusted;
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
    let job = &config.job;
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
        config: config.agent.clone(),
        workspace: placed.workspace.clone(),
        mode: tools.policy.mode(),
        repo_files: guard.repo_files.clone(),
        context_length: config.context_length,
        checkpoints: base.checkpoints.clone(),
        user_hooks: user_hooks.nested(),
    });
    if let Some(tool) = super::subagents::tool(&job.subagents, runner) {
        tools.registry.register(Arc::new(tool));
    }
}

/// The conversation to run: the recorded one of a resumed run (its budget restored), or a
/// new one from the prompt, with the session it is kept in.
pub(crate) fn conversation(
    config: &RunConfig,
    resume: Option<super::run::Resume>,
    placed: &Placed,
    prompt: Option<String>,
) -> (RunState, Session) {
    let mut budget = Budget::new(config.job.limits.clone());
    match resume {
        Some(r) => {
            let mut s = r.session;
            // The configuration in force now (the stored one with the resume's flags).
            s.job.config = Some(config.view());
            budget.restore(s.turns, s.usage, s.cost_usd);
            let mut state = RunState::new(s.history.clone(), budget);
            state.in_flight = s.in_flight.clone();
            state.follow_up = r.prompt.map(Message::user);
            if r.continuation.answered {
                state.final_text = super::continuation::last_answer(&state.history);
            }
            (state, s)
        }
        None => {
            let session = Session {
                schema_version: SESSION_VERSION,
                session_id: placed.run_id.clone(),
                job: job_record(config),
                workspace: placed.workspace.display().to_string(),
                created_at: now(),
                ..Session::default()
            };
            let first = Message::user(prompt.unwrap_or_default());
            (RunState::new(vec![first], budget), session)
        }
    }
}

/// A run about to start, as `announce` tells it.
pub(crate) struct Start<'a> {
    pub placed: &'a Placed,
    pub tools: &'a Tools,
    pub client: &'a dyn ModelClient,
    pub state: &'a RunState,
    pub isolation: Option<&'a str>,
}

/// The events that open a run: its start, MCP servers, warnings and the rules that always
/// apply. Returns why the run must end at once (the sandbox it requires is not there).
pub(crate) fn announce(
    config: &RunConfig,
    start: &Start<'_>,
    guard: &mut Guard,
    hooks: &SessionHooks,
    emitter: &Arc<Emitter>,
) -> Option<String> {
    let info = start.client.info();
    let first = start.state.history.first().map(|m| m.text().to_owned());
    emitter.emit(Event::RunStarted {
        job: config.job.name.clone(),
        prompt: first.unwrap_or_default(),
        provider: info.provider,
        model: info.model,
        workspace: start.placed.workspace.display().to_string(),
        tools: start.tools.registry.names(),
        mode: start.tools.policy.mode().as_str().to_owned(),
        resumed: start.placed.resumed,
        continues: start.placed.resumed && start.state.follow_up.is_none(),
        output_dir: start.placed.out_dir.display().to_string(),
        session_path: Some(hooks.path.display().to_string()),
        checks: config.job.checks.iter().map(|c| c.name.clone()).collect(),
        isolation: start.isolation.map(str::to_owned),
        sandbox: Some(Box::new(guard.sandbox.status().clone())),
        policy: start.tools.policy.table(),
        report_path: config
            .html
            .then(|| start.placed.out_dir.join(crate::report::html::FILE_NAME))
            .map(|p| p.display().to_string()),
        trace_id: start
            .placed
            .trace
            .as_ref()
            .map(crate::telemetry::RunTrace::trace_hex),
    });
    // The sandbox got before now (set up on its own thread) is told from here on.
    guard.sandbox.announced();
    // The configuration in force (a resume's flags laid over the first run's) and the
    // messages the run starts with.
    let view = serde_json::to_value(config.view()).unwrap_or_default();
    hooks.announce(start.state, view);
    super::extensions::report_mcp(&start.tools.statuses, emitter);
    if let Some(hub) = &start.tools.hub {
        hub.record_notifications(emitter.clone());
    }
    for message in std::mem::take(&mut guard.warnings) {
        emitter.emit(Event::Warning { message });
    }
    for r in guard
        .rules
        .iter()
        .filter(|r| matches!(r.applies, crate::rules::Applies::Always))
    {
        emitter.emit(Event::RuleApplied {
            turn: 0,
            name: r.name.clone(),
            origin: r.origin.clone(),
            reason: "always applies".to_owned(),
        });
    }
    match &guard.sandbox_verdict {
        Ok(Some(warning)) => {
            emitter.emit(Event::Warning {
                message: warning.clone(),
            });
            None
        }
        Ok(None) => None,
        Err(refused) => Some(refused.to_string()),
    }
}

/// The session log (opened now, before the first event) and the uploader.
pub(crate) fn session(
    config: &RunConfig,
    placed: &Placed,
    session: &Session,
    state: &RunState,
    base: &Base<'_>,
) -> (SessionHooks, Option<UploaderHandle>) {
    let hooks = SessionHooks::start(
        &placed.out_dir,
        session,
        state,
        placed.resumed,
        base.redactor,
        base.emitter,
        base.session,
        base.checkpoints.clone(),
    );
    let uploads = super::uploads::start(
        &config.job,
        config.upload_url.as_deref(),
        &placed.run_id,
        hooks.path.clone(),
        base.checkpoints.clone(),
        base.redactor,
        base.emitter,
    );
    (hooks, uploads)
}

/// The system prompt, once the git status is known (the checkpointer's, or taken now).
pub(crate) async fn system(
    config: &RunConfig,
    placed: &Placed,
    guard: &Guard,
    tools: &Tools,
    status_rx: Option<tokio::sync::oneshot::Receiver<String>>,
) -> Result<SystemPrompt, RunError> {
    let status = match status_rx {
        Some(rx) => rx.await.ok(),
        None => None,
    };
    let status = match status {
        Some(text) => (true, text),
        None => {
            let ws = placed.workspace.clone();
            tokio::task::spawn_blocking(move || crate::agent::git_status(&ws))
                .await
                .map_err(|e| RunError::Git(e.to_string()))?
        }
    };
    Ok(system_prompt(
        &config.job,
        &guard.rules,
        &placed.workspace,
        tools.policy.mode(),
        config.format,
        &guard.repo_files,
        &config.trust,
        status,
    ))
}
