//! One job, start to finish: set up, run the agent loop, and always leave result.json,
//! events.jsonl and session.json behind — on success, failure, timeout, interrupt or a
//! panic. A resumed run continues in the same folder with the recorded conversation.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::FutureExt;
use tokio::sync::Mutex;

use super::outputs;
use super::session_hooks::SessionHooks;
use super::setup::{self, PolicyFlags};
use crate::agent::{
    Agent, AgentConfig, Budget, ContextWindow, Outcome, RunState, StopCause, StopSignal,
    SystemPrompt,
};
use crate::cli::{Format, RunArgs};
use crate::context::pricing;
use crate::conversation::Message;
use crate::events::{Event, now};
use crate::exit_code::{Limit, Status};
use crate::job::{Job, ProviderKind};
use crate::observability::LogHandle;
use crate::redact::Redactor;
use crate::report::{RunResult, github};
use crate::session::{JobRecord, SESSION_VERSION, Session};
use crate::tools::{ToolLimits, ToolShared};

pub(crate) struct RunOptions<'a> {
    pub args: &'a RunArgs,
    pub log: &'a LogHandle,
}

/// An earlier run to continue.
pub(crate) struct Resume {
    pub path: PathBuf,
    pub session: Session,
}

/// A new run id: sortable by time, unique enough to share a folder.
pub(crate) fn new_run_id() -> String {
    let now = jiff::ZonedDateTime::now();
    format!(
        "{}-{:06x}",
        now.strftime("%Y%m%d-%H%M%S"),
        fastrand::u32(..0x100_0000)
    )
}

fn read_stdin_prompt() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    if text.trim().is_empty() {
        return Err("the prompt is `-` but stdin was empty".to_owned());
    }
    Ok(text.trim().to_owned())
}

/// Write `value` as pretty JSON to `path` atomically, secrets masked.
pub(crate) fn write_json(
    path: &Path,
    value: &impl serde::Serialize,
    redactor: &Redactor,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let text = redactor.redact(&text);
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    std::io::Write::write_all(&mut tmp, b"\n")?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Status, reason and limit of an outcome.
fn classify(outcome: &Outcome, job: &Job) -> (Status, String, Option<Limit>) {
    match outcome {
        Outcome::Completed => (Status::Success, "the agent finished".to_owned(), None),
        Outcome::Failed(r) => (
            Status::Failed,
            format!("the agent reported failure: {r}"),
            None,
        ),
        Outcome::Rejected(r) => (Status::Failed, r.clone(), None),
        Outcome::ApprovalRequired(r) => (Status::ApprovalRequired, r.clone(), None),
        Outcome::Limit(l) => {
            let value = match l {
                Limit::MaxTurns => job.limits.max_turns.map(|v| v.to_string()),
                Limit::Timeout => job.limits.timeout.map(|d| format!("{} s", d.as_secs_f64())),
                Limit::MaxCost => job.limits.max_cost_usd.map(|v| format!("${v}")),
                Limit::MaxTokens => job.limits.max_tokens.map(|v| v.to_string()),
            };
            let reason = format!(
                "limit reached: {} ({})",
                l.as_str(),
                value.unwrap_or_default()
            );
            (Status::LimitReached, reason, Some(*l))
        }
        Outcome::Provider(e) => (
            Status::ProviderError,
            format!("model provider failed: {e}"),
            None,
        ),
        Outcome::Internal(m) => (Status::InternalError, format!("internal error: {m}"), None),
        Outcome::Interrupted => (
            Status::Interrupted,
            "interrupted by a signal".to_owned(),
            None,
        ),
    }
}

/// Stop the run on SIGINT or SIGTERM.
fn listen_for_signals(stop: StopSignal) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        stop.stop(StopCause::Interrupted);
    })
}

fn tool_limits(job: &Job) -> ToolLimits {
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

/// The context window of a model that the job does not describe: the provider's published
/// size for well-known families, else 128k.
fn default_context_length(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    if m.contains("gpt-4.1") || m.contains("gemini") {
        1_000_000
    } else if m.contains("claude")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
    {
        200_000
    } else if m.contains("gpt-5") {
        400_000
    } else {
        128_000
    }
}

fn price_for(job: &Job) -> Option<pricing::Price> {
    match job.model.provider {
        ProviderKind::Script => Some(pricing::Price {
            input_per_mtok: 0.0,
            output_per_mtok: 0.0,
            cache_read_per_mtok: None,
            cache_write_per_mtok: None,
        }),
        _ => pricing::builtin_price(&job.model.name),
    }
}

fn system_prompt(
    job: &Job,
    workspace: &Path,
    mode: crate::permissions::Mode,
    format: Format,
) -> SystemPrompt {
    let mut system = SystemPrompt::build(
        workspace,
        mode,
        job.rules.clone(),
        format == Format::Json && job.output_schema.is_none(),
    );
    if let Some(schema) = &job.output_schema {
        system.add(crate::structured::instruction(schema));
    }
    system
}

fn job_record(job: &Job, args: &RunArgs) -> JobRecord {
    JobRecord {
        name: job.name.clone(),
        file: job
            .source
            .as_ref()
            .and_then(|p| std::path::absolute(p).ok())
            .map(|p| p.display().to_string()),
        text: job
            .source
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok()),
        params: args.params.clone(),
        args: args.shaping_args(),
    }
}

/// Where a run works and writes: new folders, or the resumed run's own.
fn locate(
    job: &Job,
    args: &RunArgs,
    resume: Option<&Resume>,
) -> Result<(String, PathBuf, PathBuf), String> {
    if let Some(r) = resume {
        let out = r
            .path
            .parent()
            .map(Path::to_path_buf)
            .ok_or("session file has no folder")?;
        let ws = PathBuf::from(&r.session.workspace);
        return Ok((r.session.session_id.clone(), out, ws));
    }
    let source_ws = setup::workspace_dir(job, args)?;
    let run_id = new_run_id();
    let out_dir = outputs::output_dir(args, &run_id)?;
    let workspace = if job.workspace.copy {
        let dest = out_dir.join("workspace");
        super::workspace::copy_workspace(&source_ws, &dest)?;
        dest.canonicalize().map_err(|e| e.to_string())?
    } else {
        source_ws
    };
    Ok((run_id, out_dir, workspace))
}

/// Run one job. `Err` means it could not start (exit 2); every started run returns its
/// result, which is also in `<out>/result.json`.
pub(crate) async fn run_job(
    job: Job,
    opts: &RunOptions<'_>,
    resume: Option<Resume>,
) -> Result<RunResult, String> {
    let args = opts.args;
    let parts = setup::build_client(&job)?;
    let (run_id, out_dir, workspace) = locate(&job, args, resume.as_ref())?;
    let policy = setup::build_policy(&job, &PolicyFlags::from(args), &workspace)?;
    let prompt = match (&resume, &job.prompt) {
        (Some(_), _) => None,
        (None, Some(p)) => Some(p.clone()),
        (None, None) => Some(read_stdin_prompt()?),
    };
    let redactor = setup::redactor(parts.key.as_ref(), &job.redact);
    opts.log.set_redactor(redactor.clone());
    if github::is_actions() {
        let masks = github::mask_commands(redactor.values().iter().map(String::as_str));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), masks.as_bytes());
    }
    let sinks = outputs::attach(
        &run_id,
        &out_dir,
        &workspace,
        &job.name,
        args,
        opts.log,
        &redactor,
        resume.is_some(),
    )?;
    let emitter = sinks.emitter.clone();

    let registry = setup::registry(&policy, &job.model.name);
    let stop = StopSignal::new();
    if let Some(limit) = job.limits.timeout {
        stop.arm_timeout(limit);
    }
    let signals = listen_for_signals(stop.clone());
    let shared = Arc::new(ToolShared::new(
        workspace.clone(),
        setup::tool_env(parts.key.as_ref(), parts.key_env.as_deref(), &run_id),
        stop.token().clone(),
        tool_limits(&job),
        out_dir.join("artifacts"),
    ));
    let info = parts.client.info();
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
    let resumed = prompt.is_none();
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
    });
    let checkpoints = job
        .git
        .checkpoints
        .then(|| {
            super::checkpoints::Checkpoints::open(&workspace, &run_id, &out_dir, resumed, &emitter)
        })
        .flatten()
        .map(Arc::new);
    let session_path = out_dir.join("session.json");
    let hooks = SessionHooks {
        path: session_path.clone(),
        redactor: redactor.clone(),
        session: Mutex::new(session),
        emitter: emitter.clone(),
        checkpoints: checkpoints.clone(),
    };
    let mut agent = Agent {
        client: parts.client.as_ref(),
        tools: &registry,
        policy: &policy,
        shared: shared.clone(),
        emitter: &emitter,
        redactor: &redactor,
        stop: stop.clone(),
        config: AgentConfig {
            model: job.model.name.clone(),
            max_tokens: job.model.max_tokens,
            temperature: job.model.temperature,
            on_ask: args.on_ask.unwrap_or(job.permissions.on_ask),
            retry: setup::retry_policy(&job),
            idle_timeout: setup::idle_timeout(&job),
            price: price_for(&job),
        },
        system: system_prompt(&job, &workspace, policy.mode(), args.format),
        hooks: &hooks,
        window: Some(ContextWindow::new(
            &job.model.name,
            job.model
                .context_length
                .unwrap_or_else(|| default_context_length(&job.model.name)),
            job.model.max_tokens.map(u64::from),
        )),
    };
    let (outcome, report) =
        std::panic::AssertUnwindSafe(super::attempts::run_attempts(&mut agent, &mut state, &job))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "unknown panic".to_owned());
                (
                    Outcome::Internal(format!("panic in the agent loop: {msg}")),
                    super::attempts::AttemptsReport::default(),
                )
            });
    signals.abort();
    shared.background().kill_all().await;
    let (status, reason, limit) = classify(&outcome, &job);
    let finished = Finished {
        outcome: &outcome,
        status,
        reason,
        limit,
        report: &report,
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
    )
    .await;
    stop.token().cancel();
    Ok(result)
}

/// How the attempts ended, classified.
struct Finished<'a> {
    outcome: &'a Outcome,
    status: Status,
    reason: String,
    limit: Option<Limit>,
    report: &'a super::attempts::AttemptsReport,
}

/// Everything after the agent stops: artifacts, the final events, result.json,
/// junit.xml, and the GitHub Actions outputs.
#[allow(clippy::too_many_arguments)]
async fn finish(
    job: &Job,
    state: &RunState,
    shared: &ToolShared,
    sinks: &outputs::Sinks,
    hooks: &SessionHooks,
    out_dir: &Path,
    redactor: &Redactor,
    f: Finished<'_>,
    checkpoints: Option<&super::checkpoints::Checkpoints>,
) -> RunResult {
    let emitter = &sinks.emitter;
    let skip = [out_dir.to_path_buf(), shared.workspace.join(".git")];
    let (mut artifacts, warnings) = crate::artifacts::collect(
        &job.artifacts,
        &shared.workspace,
        &out_dir.join("artifacts"),
        &skip,
    );
    for w in warnings {
        emitter.emit(Event::Warning { message: w });
    }
    artifacts.extend(shared.artifacts());
    // The diff first, then (on failure, if asked) put the workspace back.
    let diff = checkpoints.and_then(|c| c.write_diff(out_dir, redactor));
    if let (true, Some(c)) = (
        f.status != Status::Success && job.git.rollback_on_failure,
        checkpoints,
    ) {
        c.rollback_to_start(&shared.workspace);
    }
    for a in &artifacts {
        emitter.emit(Event::ArtifactCollected {
            path: a.path.clone(),
            size: a.size,
            sha256: a.sha256.clone(),
        });
    }
    hooks
        .finish(state, f.status.as_str(), shared.checklist())
        .await;
    emitter.emit(Event::RunCompleted {
        status: f.status,
        exit_code: f.status.exit_code(),
        reason: f.reason,
        limit: f.limit,
        result: state.final_text.clone(),
        num_turns: state.budget.turns,
        duration_ms: state.budget.elapsed_ms(),
        usage: state.budget.usage,
        total_cost_usd: state.budget.cost_usd,
        cost_unknown: state.budget.cost_usd.is_none(),
    });
    sinks.result.update(|r| {
        r.agent_finished = matches!(f.outcome, Outcome::Completed | Outcome::Rejected(_));
        r.attempts = f.report.attempts;
        r.structured_output = f.report.structured_output.clone();
        r.checklist = shared.checklist();
        r.artifacts = artifacts;
        r.session_path = Some(hooks.path.display().to_string());
        r.checks_declared = job.checks.iter().map(|c| c.name.clone()).collect();
        if let Some((path, stat, secret)) = &diff {
            r.patch_path = Some(path.display().to_string());
            r.diff = Some(*stat);
            r.secret_in_diff = *secret;
        }
        r.checkpoints = checkpoints.map(|c| c.list()).unwrap_or_default();
    });
    let mut result = sinks.result.snapshot();
    if let Err(e) = write_json(&out_dir.join("result.json"), &result, redactor) {
        tracing::error!("cannot write result.json: {e}");
    }
    let suite = crate::report::junit::suite(&result, redactor);
    let xml = crate::report::junit::render(vec![suite.clone()]);
    result.junit_suite = Some(suite);
    if let Err(e) = std::fs::write(out_dir.join("junit.xml"), xml) {
        tracing::error!("cannot write junit.xml: {e}");
    }
    if github::is_actions() {
        let mut err = std::io::stderr().lock();
        let _ = std::io::Write::write_all(
            &mut err,
            redactor.redact(&github::annotations(&result)).as_bytes(),
        );
        github::append_to_env_file(
            "GITHUB_STEP_SUMMARY",
            &redactor.redact(&github::summary(&result)),
        );
        github::append_to_env_file("GITHUB_OUTPUT", &redactor.redact(&github::outputs(&result)));
    }
    result
}
