//! One job, start to finish: set up, run the agent loop, and always leave result.json,
//! events.jsonl and session.jsonl behind — on success, failure, timeout, interrupt or a
//! panic. A resumed run continues in the same folder with the recorded conversation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::FutureExt;

use super::checkpoints::{Checkpoints, Early};
use super::finish::{Finished, finish};
use super::outputs;
use super::run_parts::{
    classify, default_context_length, job_record, listen_for_signals, new_run_id, price_for,
    read_stdin_prompt, system_prompt, tool_limits,
};
use super::session_hooks::SessionHooks;
use super::setup::{self, PolicyFlags};
use super::start_error::{RunError, StartError};
use crate::agent::{Agent, AgentConfig, Budget, ContextWindow, Outcome, RunState, StopSignal};
use crate::cli::RunArgs;
use crate::conversation::Message;
use crate::events::{Event, now};
use crate::job::Job;
use crate::observability::LogHandle;
use crate::report::{RunResult, github};
use crate::session::{SESSION_VERSION, Session};
use crate::tools::ToolShared;

pub(crate) struct RunOptions<'a> {
    pub args: &'a RunArgs,
    /// A new run's checkpointer opened before the runtime (see `app::early_checkpoints`),
    /// used when the run's workspace is the one it was opened on.
    pub early: std::sync::Mutex<Option<Early>>,
    pub log: &'a LogHandle,
    /// `worktree` when the run works in a throwaway worktree (reported in result.json).
    pub isolation: Option<&'a str>,
}

/// An earlier run to continue.
pub(crate) struct Resume {
    pub path: PathBuf,
    pub session: Session,
}

/// Where a run works and writes: new folders, or the resumed run's own.
fn locate(
    job: &Job,
    args: &RunArgs,
    resume: Option<&Resume>,
) -> Result<(String, PathBuf, PathBuf), StartError> {
    if let Some(r) = resume {
        let out = r
            .path
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| RunError::Session("the session file has no folder".to_owned()))?;
        let ws = PathBuf::from(&r.session.workspace);
        return Ok((r.session.session_id.clone(), out, ws));
    }
    let source_ws = setup::workspace_dir(job, args).map_err(RunError::Usage)?;
    let run_id = new_run_id();
    let out_dir = outputs::output_dir(args, &run_id)?;
    let workspace = if job.workspace.copy {
        let dest = out_dir.join("workspace");
        super::workspace::copy_workspace(&source_ws, &dest).map_err(RunError::from)?;
        dest.canonicalize()
            .map_err(|e| RunError::run_folder(&dest, e))?
    } else {
        source_ws
    };
    Ok((run_id, out_dir, workspace))
}

/// Run one job. `Err` means it could not start (exit 2, or 6 for its run folder); every
/// started run returns its result, which is also in `<out>/result.json`.
pub(crate) async fn run_job(
    job: Job,
    opts: &RunOptions<'_>,
    resume: Option<Resume>,
) -> Result<RunResult, StartError> {
    let args = opts.args;
    // Key and headers are checked now (a usage error runs nothing); building an HTTPS
    // client (TLS roots: milliseconds) overlaps with the rest of the set-up.
    let (key, key_env) = setup::api_key(&job).map_err(RunError::Usage)?;
    setup::headers(&job).map_err(RunError::Usage)?;
    let client_task = setup::ClientTask::start(&job);
    let (run_id, out_dir, workspace) = locate(&job, args, resume.as_ref())?;
    // Sinks are attached below; nothing is emitted before.
    let emitter = Arc::new(crate::events::Emitter::new(run_id.clone()));
    // The system prompt needs the git status; a new run's checkpointer takes it on its
    // own thread, started before the runtime when the command line allowed (`early`),
    // else now: the first request waits for it.
    let resumed = resume.is_some();
    let early = opts
        .early
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .filter(|e| !resumed && e.workspace() == workspace);
    let (checkpoints, status_rx) = match (job.git.checkpoints, resumed) {
        (false, _) => (None, None),
        (true, true) => (
            Some(Arc::new(Checkpoints::resume(
                &workspace, &run_id, &out_dir, &job.git, &emitter,
            ))),
            None,
        ),
        (true, false) => {
            let early = early.unwrap_or_else(|| Early::open(&workspace));
            let (checkpoints, status) = early.bind(&run_id, &out_dir, &job.git, &emitter);
            (Some(Arc::new(checkpoints)), Some(status))
        }
    };
    let mcp_configs = super::extensions::mcp_configs(&job, &workspace).map_err(RunError::Usage)?;
    let trust = crate::untrusted::Trust::new(
        args.untrusted || !job.untrusted_paths.is_empty(),
        job.untrusted_paths.clone(),
    );
    let (built, repo_files, repo_note) = setup::enforced_policy(
        &job,
        &PolicyFlags::from(args),
        &workspace,
        args.base_ref.as_deref(),
        trust.untrusted,
    )
    .map_err(RunError::Usage)?;
    // The evaluator must know whether commands run contained (and a read-only run kept so).
    let env = setup::tool_env(key.as_ref(), key_env.as_deref(), &run_id);
    let plan = built.mode() == crate::permissions::Mode::Plan;
    let (sandbox, sandbox_status, sandbox_verdict) =
        setup::sandbox(&job, &workspace, &env, args.require_sandbox, plan);
    let context = crate::permissions::command_context(built.mode(), sandbox_status.as_ref());
    let policy = Arc::new(built.with_context(context));
    let (workspace_rules, mut rule_warnings) = crate::rules::workspace_rules(&repo_files);
    rule_warnings.extend(repo_note);
    rule_warnings.extend(setup::repo_rule_warnings(&policy));
    if trust.untrusted && (args.auto || job.permissions.mode == crate::permissions::Mode::Auto) {
        rule_warnings.push("auto mode is off in untrusted mode: calls that need permission need a rule that names them".to_owned());
    }
    let all_rules: Vec<crate::rules::RuleDef> =
        job.rules.iter().cloned().chain(workspace_rules).collect();
    let prompt = match (&resume, &job.prompt) {
        (Some(_), _) => None,
        (None, Some(p)) => Some(p.clone()),
        (None, None) => Some(read_stdin_prompt().map_err(RunError::Usage)?),
    };
    let redactor = setup::redactor(key.as_ref(), &job, args.upload_url.as_deref());
    opts.log.set_redactor(redactor.clone());
    if github::is_actions() {
        let masks = github::mask_commands(redactor.values().iter().map(String::as_str));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), masks.as_bytes());
    }
    let sinks = outputs::attach(
        emitter.clone(),
        &out_dir,
        &job.name,
        args,
        opts.log,
        &redactor,
        resume.is_some(),
    )
    .map_err(RunError::RunFiles)?;
    let mut registry = setup::registry(&policy, &job.model.name);
    rule_warnings.extend(super::extensions::register_skills(
        &job,
        &workspace,
        &mut registry,
        &policy,
        &repo_files,
    ));
    let stop = StopSignal::new();
    stop.arm_timeout(crate::agent::budget::run_timeout(&job.limits).0);
    let signals = listen_for_signals(stop.clone());
    let shared = Arc::new(
        ToolShared::new(
            workspace.clone(),
            env,
            stop.token().clone(),
            tool_limits(&job),
            out_dir.join("artifacts"),
        )
        .with_sandbox(sandbox)
        .with_untrusted(trust.untrusted),
    );
    let (mcp_hub, mcp_statuses, mcp_failure, policy) = match super::extensions::start_mcp(
        mcp_configs,
        &shared.env,
        &mut registry,
        &policy,
        trust.untrusted,
    )
    .await
    {
        Ok((hub, statuses, p)) => (hub, statuses, None, Arc::new(p)),
        Err(e) => (None, Vec::new(), Some(e), policy),
    };
    let reserve = usize::from(!job.subagents.is_empty());
    rule_warnings.extend(crate::tools::offer_limit::trim(
        &mut registry,
        job.model.provider,
        reserve,
    ));
    let parts = client_task.wait().await?;
    let info = parts.client.info();
    let config = AgentConfig {
        model: job.model.name.clone(),
        max_tokens: job.model.max_tokens,
        temperature: job.model.temperature,
        on_ask: args.on_ask.unwrap_or(job.permissions.on_ask),
        retry: setup::retry_policy(&job),
        idle_timeout: setup::idle_timeout(&job),
        price: price_for(&job),
        trust: trust.clone(),
        text_tools: job.model.tool_call_format == crate::job::file::ToolCallFormat::Text,
        max_calls: crate::agent::budget::max_calls_per_response(&job.limits),
    };
    let context_length = job
        .model
        .context_length
        .unwrap_or_else(|| default_context_length(&job.model.name));
    if !job.subagents.is_empty() && policy.is_offered("Subagent") {
        let runner = Arc::new(super::subagents::Subagents {
            defs: job.subagents.clone(),
            client: parts.client.clone(),
            tools: registry.clone(),
            policy: policy.clone(),
            shared: shared.clone(),
            emitter: emitter.clone(),
            redactor: redactor.clone(),
            stop: stop.clone(),
            config: config.clone(),
            workspace: workspace.clone(),
            mode: policy.mode(),
            repo_files: repo_files.clone(),
            context_length,
            checkpoints: checkpoints.clone(),
        });
        if let Some(tool) = super::subagents::tool(&job.subagents, runner) {
            registry.register(Arc::new(tool));
        }
    }
    let mut budget = Budget::new(job.limits.clone());
    let (mut state, session) = match resume {
        Some(r) => {
            budget.restore(r.session.turns, r.session.usage, r.session.cost_usd);
            let mut state = RunState::new(r.session.history.clone(), budget);
            state.in_flight = r.session.in_flight.clone();
            (state, r.session)
        }
        None => {
            let session = Session {
                schema_version: SESSION_VERSION,
                session_id: run_id.clone(),
                job: job_record(&job, args),
                workspace: workspace.display().to_string(),
                created_at: now(),
                ..Session::default()
            };
            (
                RunState::new(
                    vec![Message::user(prompt.clone().unwrap_or_default())],
                    budget,
                ),
                session,
            )
        }
    };
    // The session log exists before the first event: a run killed from here on leaves one.
    let hooks = SessionHooks::start(
        &out_dir,
        &session,
        &state,
        resumed,
        &redactor,
        &emitter,
        checkpoints.clone(),
    );
    emitter.emit(Event::RunStarted {
        job: job.name.clone(),
        prompt: state
            .history
            .first()
            .map(|m| m.text().to_owned())
            .unwrap_or_default(),
        provider: info.provider.clone(),
        model: info.model.clone(),
        workspace: workspace.display().to_string(),
        tools: registry.names(),
        mode: policy.mode().as_str().to_owned(),
        resumed,
        output_dir: out_dir.display().to_string(),
        session_path: Some(out_dir.join("session.json").display().to_string()),
        checks: job.checks.iter().map(|c| c.name.clone()).collect(),
        isolation: opts.isolation.map(str::to_owned),
        sandbox: sandbox_status.clone().map(Box::new),
    });
    super::extensions::report_mcp(&mcp_statuses, &emitter);
    if let Some(hub) = &mcp_hub {
        hub.record_notifications(emitter.clone());
    }
    for message in rule_warnings {
        emitter.emit(Event::Warning { message });
    }
    for r in all_rules
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
    let conditional_rules: Vec<crate::rules::RuleDef> = all_rules
        .iter()
        .filter(|r| matches!(r.applies, crate::rules::Applies::OnTouch { .. }))
        .cloned()
        .collect();
    let sandbox_failure = match sandbox_verdict {
        Ok(Some(warning)) => {
            emitter.emit(Event::Warning { message: warning });
            None
        }
        Ok(None) => None,
        Err(reason) => Some(reason),
    };
    let uploads = super::uploads::start(
        &job,
        args.upload_url.as_deref(),
        &run_id,
        hooks.path.clone(),
        checkpoints.clone(),
        &redactor,
        &emitter,
    );
    let status = match status_rx {
        Some(rx) => rx.await.ok(),
        None => None,
    };
    let status = match status {
        Some(text) => (true, text),
        None => {
            let ws = workspace.clone();
            tokio::task::spawn_blocking(move || crate::agent::git_status(&ws))
                .await
                .map_err(|e| RunError::Git(e.to_string()))?
        }
    };
    let system = system_prompt(
        &job,
        &all_rules,
        &workspace,
        policy.mode(),
        args.format,
        &repo_files,
        &trust,
        status,
    );
    let mut agent = Agent {
        client: parts.client.as_ref(),
        tools: &registry,
        policy: &policy,
        shared: shared.clone(),
        emitter: &emitter,
        redactor: &redactor,
        stop: stop.clone(),
        config: config.clone(),
        system,
        hooks: &hooks,
        rules: conditional_rules,
        narrow: None,
        window: Some(ContextWindow::new(
            &job.model.name,
            job.model
                .context_length
                .unwrap_or_else(|| default_context_length(&job.model.name)),
            job.model.max_tokens.map(u64::from),
        )),
    };
    let attempts = async {
        match mcp_failure.or(sandbox_failure) {
            Some(e) => (
                Outcome::Internal(e),
                super::attempts::AttemptsReport::default(),
            ),
            None => super::attempts::run_attempts(&mut agent, &mut state, &job).await,
        }
    };
    let (outcome, report) = std::panic::AssertUnwindSafe(attempts)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            (
                Outcome::Internal(format!(
                    "panic in the agent loop: {}",
                    panic_message(&*panic)
                )),
                super::attempts::AttemptsReport::default(),
            )
        });
    signals.abort();
    shared.background().kill_all().await;
    if let Some(hub) = mcp_hub {
        hub.shutdown().await;
    }
    if let (false, Some(c)) = (report.checks.is_empty(), &checkpoints) {
        c.note_change();
    }
    let (status, reason, limit) = classify(&outcome, &job);
    let finished = Finished {
        outcome: &outcome,
        status,
        reason,
        limit,
        jobs_in_call: opts.args.jobs_in_call.max(1),
    };
    let result = finish(
        &job,
        &state,
        &shared,
        &sinks,
        &hooks,
        &out_dir,
        &redactor,
        finished,
        checkpoints.as_deref(),
        uploads,
    )
    .await;
    stop.token().cancel();
    Ok(result)
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "unknown panic".to_owned())
}
