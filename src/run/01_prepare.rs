//! Step 1 of a run: prepare it — from its [`RunConfig`] to everything the agent loop needs,
//! by steps 2 to 7 in turn: the run placed (id, folder, workspace), its policy and
//! containment, its outputs, tools, model client, conversation and session, with the start
//! announced on the event stream.
//! Anything that fails here is a start error: nothing has run yet.

use std::path::PathBuf;
use std::sync::Arc;

use super::announce::{Start, announce};
use super::checkpoints::Checkpoints;
use super::conversation::{conversation, open_session, read_stdin_prompt, system};
use super::guard::{Guard, guard};
use super::outputs::{Sinks, attach_outputs, start_telemetry};
use super::place::{Placed, StatusRx, open_checkpoints, place, unplace};
use super::session_hooks::SessionHooks;
use super::setup;
use super::signals::{Signals, listen_for_signals};
use super::start_error::{RunError, StartError};
use super::tools::{Base, Tools, add_subagents, tool_limits, tools};
use crate::agent::{RunState, StopSignal, SystemPrompt};
use crate::config::RunConfig;
use crate::events::Emitter;
use crate::provider::ModelClient;
use crate::redact::Redactor;
use crate::rules::RuleDef;
use crate::run::{Resume, RunOptions};
use crate::tools::ToolShared;
use crate::upload::UploaderHandle;

/// A run ready to execute: what the agent loop borrows and what `finish` writes from.
pub(crate) struct Prepared {
    pub out_dir: PathBuf,
    pub client: Arc<dyn ModelClient>,
    /// The tool set, its policy, the MCP servers and why the run must end before its
    /// first turn (an MCP server or the sandbox), if it must.
    pub tools: Tools,
    pub shared: Arc<ToolShared>,
    pub emitter: Arc<Emitter>,
    pub redactor: Redactor,
    pub stop: StopSignal,
    pub signals: Signals,
    pub hooks: SessionHooks,
    pub system: SystemPrompt,
    /// Rules that join once the run touches a matching file.
    pub conditional_rules: Vec<RuleDef>,
    pub sinks: Sinks,
    pub checkpoints: Option<Arc<Checkpoints>>,
    pub uploads: Option<UploaderHandle>,
    /// The run folder's copies into the run store.
    pub store: Option<crate::store::StoreHandle>,
    /// The run's own files as written, and the folder's lock.
    pub files: super::run_files::RunFiles,
    /// Where a resumed run picks up after the agent's loop (a new run: at the start).
    pub continuation: super::continuation::Continuation,
    /// `.git` as the run found it, put back when it ends.
    pub git_guard: Option<crate::git_guard::GitGuard>,
    /// The job's hooks (Claude Code's protocol) and answers to deferred calls.
    pub user_hooks: crate::hooks::Hooks,
}

/// Everything a run needs, built from its configuration, or why it cannot start.
pub(crate) async fn prepare(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    resume: Option<Resume>,
) -> Result<(Prepared, RunState), StartError> {
    let job = config.job();
    // Key and headers are checked now (a usage error runs nothing); building an HTTPS
    // client (TLS roots: milliseconds) overlaps with the rest of the set-up.
    let (key, key_env) = setup::api_key(job).map_err(RunError::from)?;
    setup::headers(job).map_err(RunError::from)?;
    // Expanded before the run's folder is made: a job that cannot be leaves nothing.
    let mcp = super::extensions::mcp_configs(job, config.workspace()).map_err(RunError::from)?;
    let client_task = setup::ClientTask::start(job);
    let mut resume = resume;
    let mut placed = place(config, opts, resume.as_mut())?;
    // Sinks are attached below; nothing is emitted before.
    let emitter = Arc::new(Emitter::new(placed.run_id.clone()));
    // Before cn-run's own git work opens the repository again (a resume).
    let (git_guard, git_notes) =
        super::git_trust::start(&placed.workspace, &placed.out_dir, placed.resumed);
    let (checkpoints, status_rx) = open_checkpoints(config, opts, &placed, &emitter);
    let mcp = super::extensions::in_workspace(mcp, &placed.workspace);
    let env = setup::tool_env(key.as_ref(), key_env.as_deref(), &placed.run_id);
    let mut guard =
        guard(config, &placed, &env, &emitter).inspect_err(|_| unplace(config, &placed))?;
    guard.warnings.extend(git_notes);
    let kept = super::git_trust::keep(git_guard.as_ref(), &placed.out_dir, placed.resumed);
    guard.warnings.extend(kept);
    if !placed.resumed {
        guard
            .warnings
            .extend(super::origin::keep(&placed.workspace, &placed.out_dir));
    }
    let prompt = match (&resume, &job.prompt) {
        (Some(_), _) => None,
        (None, Some(p)) => Some(p.clone()),
        (None, None) => Some(read_stdin_prompt().inspect_err(|_| unplace(config, &placed))?),
    };
    let redactor = setup::redactor(key.as_ref(), job, config.upload_url(), &placed.workspace);
    let stop = StopSignal::new();
    let sinks = attach_outputs(config, opts, &placed, &emitter, &redactor, &stop)?;
    placed.trace = start_telemetry(config, opts, &emitter, &redactor);
    stop.arm_timeout(config.timeout().0);
    let readable = setup::bash_readable(job, &placed.workspace, &env);
    let shared = Arc::new(
        ToolShared::new(
            placed.workspace.clone(),
            env,
            stop.token().clone(),
            tool_limits(job),
            placed.out_dir.join("artifacts"),
        )
        .with_readable(&readable)
        .with_run_dir(&placed.out_dir)
        .with_deferred_sandbox(guard.sandbox.clone())
        .with_untrusted(config.trust().untrusted),
    );
    let grounds = Grounds {
        isolation: opts.isolation().map(str::to_owned),
        signals: listen_for_signals(stop.clone()),
        placed,
        emitter,
        checkpoints,
        guard,
        redactor,
        sinks,
        stop,
        shared,
        git_guard,
    };
    assemble(
        config,
        grounds,
        client_task,
        (mcp, status_rx),
        resume,
        prompt,
    )
    .await
}

/// What `prepare` has set up before the tools and the model client.
struct Grounds {
    placed: Placed,
    emitter: Arc<Emitter>,
    checkpoints: Option<Arc<Checkpoints>>,
    guard: Guard,
    redactor: Redactor,
    sinks: Sinks,
    stop: StopSignal,
    signals: Signals,
    shared: Arc<ToolShared>,
    /// How the run is isolated from others in the same call (`--isolate`), if at all.
    isolation: Option<String>,
    git_guard: Option<crate::git_guard::GitGuard>,
}

/// The tools, the client, the conversation, the session and the system prompt, with the
/// run's start announced.
async fn assemble(
    config: &RunConfig,
    g: Grounds,
    client_task: setup::ClientTask,
    (mcp, status_rx): (Vec<crate::mcp::ServerConfig>, Option<StatusRx>),
    resume: Option<Resume>,
    prompt: Option<String>,
) -> Result<(Prepared, RunState), StartError> {
    let (mut placed, mut guard) = (g.placed, g.guard);
    let mut tools = tools(config, &placed, &mut guard, &g.shared, mcp).await;
    let client = client_task.wait().await?.client;
    let base = Base {
        client: &client,
        shared: &g.shared,
        emitter: &g.emitter,
        redactor: &g.redactor,
        stop: &g.stop,
        checkpoints: &g.checkpoints,
        session: &g.sinks.session,
    };
    let approvals = resume.as_ref().map(|r| r.approvals.clone());
    let user_hooks = super::user_hooks::build(
        config,
        &g.shared,
        (&placed.run_id, &placed.out_dir, tools.policy.mode()),
        approvals.unwrap_or_default(),
        &mut guard.warnings,
    );
    add_subagents(config, &placed, &guard, &mut tools, (&base, &user_hooks));
    // A resumed run: the tools as the earlier process left them, and where it stopped.
    let continuation = resume.as_ref().map(|r| {
        super::continuation::restore_tools(&g.shared, &r.session.history, &r.events);
        r.continuation.clone()
    });
    let (state, session) = conversation(config, resume, &placed, prompt);
    let start = Start {
        placed: &placed,
        tools: &tools,
        client: client.as_ref(),
        state: &state,
        isolation: g.isolation.as_deref(),
    };
    // The session log exists before the first event: a run killed from here on leaves one.
    let (hooks, uploads) = open_session(config, &placed, &session, &state, &base);
    let store = super::store_sync::start(
        config.store(),
        &placed.run_id,
        &placed.out_dir,
        g.checkpoints.clone(),
        &g.redactor,
        &g.emitter,
    );
    let sandbox_failure = announce(config, &start, &mut guard, &hooks, &g.emitter);
    tools.failure = tools.failure.or(sandbox_failure);
    let system = system(config, &placed, &guard, &tools, status_rx).await?;
    let files = super::run_files::RunFiles::new(
        &placed.out_dir,
        g.sinks.events.clone(),
        g.sinks.session.clone(),
        placed.lock.take(),
    );
    let prepared = Prepared {
        out_dir: placed.out_dir,
        client,
        tools,
        shared: g.shared,
        emitter: g.emitter,
        redactor: g.redactor,
        stop: g.stop,
        signals: g.signals,
        hooks,
        system,
        conditional_rules: guard.conditional_rules(),
        sinks: g.sinks,
        checkpoints: g.checkpoints,
        uploads,
        store,
        files,
        continuation: continuation.unwrap_or_default(),
        git_guard: g.git_guard,
        user_hooks,
    };
    Ok((prepared, state))
}
