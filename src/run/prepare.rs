//! The first step of a run: from its [`RunConfig`] to everything the agent loop needs —
//! the run placed (id, folder, workspace), its policy and containment, its outputs, tools,
//! model client, conversation and session — with the start announced on the event stream.
//! Anything that fails here is a start error: nothing has run yet.

use std::path::PathBuf;
use std::sync::Arc;

use super::checkpoints::{Checkpoints, Early};
use super::outputs::{self, Sinks};
use super::prepare_parts::{self as parts, Tools};
use super::run_parts::{listen_for_signals, new_run_id, read_stdin_prompt, tool_limits};
use super::session_hooks::SessionHooks;
use super::setup;
use super::start_error::{RunError, StartError};
use crate::agent::{RunState, StopSignal, SystemPrompt};
use crate::config::RunConfig;
use crate::events::Emitter;
use crate::permissions::Policy;
use crate::provider::ModelClient;
use crate::redact::Redactor;
use crate::repo_files::RepoFiles;
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
    pub signals: super::run_parts::Signals,
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

/// Where a run works and writes: new folders, or the resumed run's own.
pub(crate) struct Placed {
    pub run_id: String,
    pub out_dir: PathBuf,
    pub workspace: PathBuf,
    pub resumed: bool,
    /// The run folder's lock, held until the run has written its last file.
    pub lock: Option<super::run_lock::RunLock>,
    /// The run's trace (OpenTelemetry on, or the caller's `TRACEPARENT`).
    pub trace: Option<crate::telemetry::RunTrace>,
}

/// The policy, containment and rules of a placed run.
pub(crate) struct Guard {
    pub policy: Arc<Policy>,
    pub repo_files: RepoFiles,
    /// The run's containment, perhaps still being set up (the first command waits).
    pub sandbox: crate::sandbox::Deferred,
    /// `Err(reason)`: the run requires containment it cannot have.
    pub sandbox_verdict: Result<Option<String>, setup::SandboxRefused>,
    /// The job's and the repository's rules.
    pub rules: Vec<RuleDef>,
    pub warnings: Vec<String>,
}

impl Guard {
    /// The rules that join once the run touches a matching file.
    fn conditional_rules(&self) -> Vec<RuleDef> {
        let on_touch = |r: &&RuleDef| matches!(r.applies, crate::rules::Applies::OnTouch { .. });
        self.rules.iter().filter(on_touch).cloned().collect()
    }
}

/// The git status the checkpointer takes for the system prompt.
type StatusRx = tokio::sync::oneshot::Receiver<String>;

/// Everything a run needs, built from its configuration, or why it cannot start.
pub(crate) async fn prepare(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    resume: Option<Resume>,
) -> Result<(Prepared, RunState), StartError> {
    let job = &config.job;
    // Key and headers are checked now (a usage error runs nothing); building an HTTPS
    // client (TLS roots: milliseconds) overlaps with the rest of the set-up.
    let (key, key_env) = setup::api_key(job).map_err(RunError::from)?;
    setup::headers(job).map_err(RunError::from)?;
    // Expanded before the run's folder is made: a job that cannot be leaves nothing.
    let mcp = super::extensions::mcp_configs(job, &config.workspace).map_err(RunError::from)?;
    let client_task = setup::ClientTask::start(job);
    let mut resume = resume;
    let mut placed = place(config, resume.as_mut())?;
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
    let redactor = setup::redactor(
        key.as_ref(),
        job,
        config.upload_url.as_deref(),
        &placed.workspace,
    );
    let stop = StopSignal::new();
    let sinks = attach_outputs(config, opts, &placed, &emitter, &redactor, &stop)?;
    placed.trace = start_telemetry(config, opts, &emitter, &redactor);
    stop.arm_timeout(config.timeout);
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
        .with_untrusted(config.trust.untrusted),
    );
    let grounds = Grounds {
        isolation: opts.isolation.map(str::to_owned),
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
    signals: super::run_parts::Signals,
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
    let mut tools = parts::tools(config, &placed, &mut guard, &g.shared, mcp).await;
    let client = client_task.wait().await?.client;
    let base = parts::Base {
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
    parts::add_subagents(config, &placed, &guard, &mut tools, (&base, &user_hooks));
    // A resumed run: the tools as the earlier process left them, and where it stopped.
    let continuation = resume.as_ref().map(|r| {
        super::continuation::restore_tools(&g.shared, &r.session.history, &r.events);
        r.continuation.clone()
    });
    let (state, session) = parts::conversation(config, resume, &placed, prompt);
    let start = parts::Start {
        placed: &placed,
        tools: &tools,
        client: client.as_ref(),
        state: &state,
        isolation: g.isolation.as_deref(),
    };
    // The session log exists before the first event: a run killed from here on leaves one.
    let (hooks, uploads) = parts::session(config, &placed, &session, &state, &base);
    let store = super::store_sync::start(
        config.store.as_deref(),
        &placed.run_id,
        &placed.out_dir,
        g.checkpoints.clone(),
        &g.redactor,
        &g.emitter,
    );
    let sandbox_failure = parts::announce(config, &start, &mut guard, &hooks, &g.emitter);
    tools.failure = tools.failure.or(sandbox_failure);
    let system = parts::system(config, &placed, &guard, &tools, status_rx).await?;
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

/// The run's id, folder and workspace: new ones (a copied workspace made now), or the
/// resumed run's own.
fn place(config: &RunConfig, resume: Option<&mut Resume>) -> Result<Placed, StartError> {
    if let Some(r) = resume {
        let out_dir = r
            .path
            .parent()
            .map(std::path::Path::to_path_buf)
            .ok_or_else(|| {
                RunError::from(crate::session::SessionError::NoFolder {
                    path: r.path.clone(),
                })
            })?;
        return Ok(Placed {
            run_id: r.session.session_id.clone(),
            out_dir,
            workspace: PathBuf::from(&r.session.workspace),
            resumed: true,
            lock: r.lock.take(),
            trace: None,
        });
    }
    let run_id = new_run_id();
    let out_dir = outputs::output_dir(config.out.as_deref(), &run_id)?;
    // Before anything is written there: a folder another run is writing stays its own.
    let lock = super::run_lock::RunLock::take(&out_dir, &format!("run {run_id}"))?;
    let workspace = if config.job.workspace.copy {
        let dest = out_dir.join("workspace");
        super::workspace::copy_workspace(&config.workspace, &dest).map_err(RunError::from)?;
        dest.canonicalize()
            .map_err(|e| RunError::run_folder(&dest, e))?
    } else {
        config.workspace.clone()
    };
    Ok(Placed {
        run_id,
        out_dir,
        workspace,
        resumed: false,
        lock: Some(lock),
        trace: None,
    })
}

/// A new run that stops before its first file: the folder cn-run made for it under
/// `.cn-run` goes again if it is still empty (a `workspace.copy` folder holds the copy and
/// stays; an `--out` folder is the user's and stays).
fn unplace(config: &RunConfig, placed: &Placed) {
    if !placed.resumed && config.out.is_none() {
        if let Some(lock) = &placed.lock {
            let _ = std::fs::remove_file(lock.path());
        }
        let _ = std::fs::remove_dir(&placed.out_dir);
    }
}

/// The run's checkpointer, if the job keeps checkpoints. The system prompt needs the git
/// status; a new run's checkpointer takes it on its own thread, started before the runtime
/// when the command line allowed (`early`), else now: the first request waits for it.
fn open_checkpoints(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    placed: &Placed,
    emitter: &Arc<Emitter>,
) -> (Option<Arc<Checkpoints>>, Option<StatusRx>) {
    let git = &config.job.git;
    let (ws, id, out) = (&placed.workspace, &placed.run_id, &placed.out_dir);
    let early = opts
        .early
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .filter(|e| !placed.resumed && e.workspace() == ws);
    match (git.checkpoints, placed.resumed) {
        (false, _) => (None, None),
        (true, true) => (
            Some(Arc::new(Checkpoints::resume(ws, id, out, git, emitter))),
            None,
        ),
        (true, false) => {
            let early = early.unwrap_or_else(|| Early::open(ws));
            let (checkpoints, status) = early.bind(id, out, git, emitter);
            (Some(Arc::new(checkpoints)), Some(status))
        }
    }
}

/// The policy the run enforces (the configuration's, in the placed workspace), its
/// containment, and the job's and repository's rules with the warnings about them.
fn guard(
    config: &RunConfig,
    placed: &Placed,
    env: &[(String, String)],
    emitter: &Arc<Emitter>,
) -> Result<Guard, StartError> {
    let ws = &placed.workspace;
    let (built, repo_files, repo_note) =
        super::resume_trust::enforced_policy(config, ws, &placed.out_dir, placed.resumed)?;
    // The evaluator must know whether commands run contained (and a read-only run kept so):
    // the first command judged waits for the sandbox.
    let mode = built.mode();
    let (sandbox, sandbox_verdict) = setup::deferred_sandbox(
        &config.job,
        ws,
        Some(&placed.out_dir),
        env,
        (
            config.settings.require_sandbox,
            mode == crate::permissions::Mode::Plan,
        ),
        sandbox_ready(emitter),
    );
    let deferred = sandbox.clone();
    let policy = Arc::new(built.with_context_later(move || {
        crate::permissions::command_context(mode, Some(&deferred.get().status))
    }));
    let (workspace_rules, mut warnings) = crate::rules::workspace_rules(&repo_files);
    warnings.extend(repo_note);
    warnings.extend(setup::repo_rule_warnings(&policy));
    warnings.extend(config.policy_warnings());
    let rules = config
        .job
        .rules
        .iter()
        .cloned()
        .chain(workspace_rules)
        .collect();
    Ok(Guard {
        policy,
        repo_files,
        sandbox,
        sandbox_verdict,
        rules,
        warnings,
    })
}

/// When the sandbox set up on its own thread is first needed: what it enforces, and a
/// warning when not everything is (a run that requires it all settled that at start).
fn sandbox_ready(emitter: &Arc<Emitter>) -> crate::sandbox::OnReady {
    let emitter = emitter.clone();
    Box::new(move |established| {
        emitter.emit(crate::events::Event::SandboxEstablished {
            sandbox: Box::new(established.status.clone()),
        });
        let verdict = setup::sandbox_verdict(&established.policy, &established.probe);
        if let Ok(Some(message)) = verdict {
            emitter.emit(crate::events::Event::Warning { message });
        }
    })
}

/// The run's trace and, when telemetry is exported, its sink among the outputs.
fn start_telemetry(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    emitter: &Emitter,
    redactor: &Redactor,
) -> Option<crate::telemetry::RunTrace> {
    let telemetry = opts.log.telemetry.as_ref()?;
    let (trace, sink) = telemetry.start_run(redactor, config.job.capture_content);
    if let Some(sink) = sink {
        emitter.add_sink(sink);
    }
    Some(trace)
}

/// Every output the events go to, with the log and GitHub's masks told the secrets.
fn attach_outputs(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    placed: &Placed,
    emitter: &Arc<Emitter>,
    redactor: &Redactor,
    stop: &StopSignal,
) -> Result<Sinks, StartError> {
    opts.log.set_redactor(redactor.clone());
    // The run writes its own records from here: what an earlier run (or process) left
    // that reports an outcome goes, so none of it can stand for this run's.
    super::run_files::clear_outcome_files(&placed.out_dir)
        .map_err(|e| RunError::run_folder(&placed.out_dir, e))?;
    if crate::report::github::is_actions() {
        let values = redactor.values();
        let masks = crate::report::github::mask_commands(values.iter().map(String::as_str));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), masks.as_bytes());
    }
    let sinks = outputs::attach(
        emitter.clone(),
        &placed.out_dir,
        &config.job.name,
        config.format,
        opts.log,
        redactor,
        placed.resumed,
        unrecorded(stop),
    )?;
    Ok(sinks)
}

/// A tool call whose start the run's files cannot record stops the run (exit 6, in words).
fn unrecorded(stop: &StopSignal) -> crate::report::jsonl::Unrecorded {
    let stop = stop.clone();
    Arc::new(move |why: String| stop.stop(crate::agent::StopCause::Environment(why)))
}
