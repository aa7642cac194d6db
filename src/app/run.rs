//! One job, start to finish: set up, run the agent loop, and always leave result.json
//! and events.jsonl behind — on success, failure, timeout, interrupt or a panic.

use std::fs::File;
use std::io::{LineWriter, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;

use super::setup::{self, PolicyFlags};
use crate::agent::{Agent, AgentConfig, Budget, NoHooks, Outcome, RunState, StopCause, StopSignal, SystemPrompt};
use crate::cli::{Format, RunArgs};
use crate::context::pricing;
use crate::conversation::Message;
use crate::events::{Emitter, Event};
use crate::exit_code::{Limit, Status};
use crate::job::{Job, ProviderKind};
use crate::observability::LogHandle;
use crate::redact::Redactor;
use crate::report::progress::ProgressSink;
use crate::report::{JsonlSink, ResultBuilder, ResultSink, RunResult};
use crate::tools::{ToolLimits, ToolShared};

pub(crate) struct RunOptions<'a> {
    pub args: &'a RunArgs,
    pub log: &'a LogHandle,
}

/// A new run id: sortable by time, unique enough to share a folder.
pub(crate) fn new_run_id() -> String {
    let now = jiff::ZonedDateTime::now();
    format!("{}-{:06x}", now.strftime("%Y%m%d-%H%M%S"), fastrand::u32(..0x100_0000))
}

fn output_dir(args: &RunArgs, run_id: &str) -> Result<PathBuf, String> {
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => {
            let root = PathBuf::from(".cn-run");
            std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
            let _ = std::fs::write(root.join(".gitignore"), "*\n");
            root.join(run_id)
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("output folder {}: {e}", dir.display()))?;
    dir.canonicalize().map_err(|e| e.to_string())
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
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize, redactor: &Redactor) -> std::io::Result<()> {
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
        Outcome::Failed(r) => (Status::Failed, format!("the agent reported failure: {r}"), None),
        Outcome::ApprovalRequired(r) => (Status::ApprovalRequired, r.clone(), None),
        Outcome::Limit(l) => {
            let value = match l {
                Limit::MaxTurns => job.limits.max_turns.map(|v| v.to_string()),
                Limit::Timeout => job.limits.timeout.map(|d| format!("{} s", d.as_secs_f64())),
                Limit::MaxCost => job.limits.max_cost_usd.map(|v| format!("${v}")),
                Limit::MaxTokens => job.limits.max_tokens.map(|v| v.to_string()),
            };
            let reason = format!("limit reached: {} ({})", l.as_str(), value.unwrap_or_default());
            (Status::LimitReached, reason, Some(*l))
        }
        Outcome::Provider(e) => (Status::ProviderError, format!("model provider failed: {e}"), None),
        Outcome::Internal(m) => (Status::InternalError, format!("internal error: {m}"), None),
        Outcome::Interrupted => (Status::Interrupted, "interrupted by a signal".to_owned(), None),
    }
}

/// Stop the run on SIGINT or SIGTERM.
fn listen_for_signals(stop: StopSignal) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
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

/// Run one job. `Err` means it could not start (exit 2); every started run returns its
/// result, which is also in `<out>/result.json`.
pub(crate) async fn run_job(job: Job, opts: &RunOptions<'_>) -> Result<RunResult, String> {
    let args = opts.args;
    let parts = setup::build_client(&job)?;
    let source_ws = setup::workspace_dir(&job, args)?;
    let run_id = new_run_id();
    let out_dir = output_dir(args, &run_id)?;
    let workspace = if job.workspace.copy {
        let dest = out_dir.join("workspace");
        super::workspace::copy_workspace(&source_ws, &dest)?;
        dest.canonicalize().map_err(|e| e.to_string())?
    } else {
        source_ws
    };
    let policy = setup::build_policy(&job, &PolicyFlags::from(args), &workspace)?;
    let prompt = match &job.prompt {
        Some(p) => p.clone(),
        None => read_stdin_prompt()?,
    };
    let redactor = setup::redactor(parts.key.as_ref());
    opts.log.set_redactor(redactor.clone());

    let emitter = Emitter::new(run_id.clone());
    let events_path = out_dir.join("events.jsonl");
    let file = File::create(&events_path).map_err(|e| format!("{}: {e}", events_path.display()))?;
    emitter.add_sink(Box::new(JsonlSink::new(LineWriter::new(file), redactor.clone())));
    let result_sink = ResultSink(Arc::new(Mutex::new(ResultBuilder::new(
        &run_id,
        &out_dir.display().to_string(),
        &events_path.display().to_string(),
        &workspace.display().to_string(),
    ))));
    emitter.add_sink(Box::new(result_sink.clone()));
    if args.format == Format::StreamJson {
        emitter.add_sink(Box::new(JsonlSink::new(std::io::stdout(), redactor.clone())));
    }
    emitter.add_sink(Box::new(ProgressSink::new(opts.log.clone(), &job.name)));

    let registry = setup::registry(&policy);
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
    emitter.emit(Event::RunStarted {
        job: job.name.clone(),
        prompt: prompt.clone(),
        provider: info.provider.clone(),
        model: info.model.clone(),
        workspace: workspace.display().to_string(),
        tools: registry.names(),
        mode: policy.mode().as_str().to_owned(),
        resumed: false,
    });
    let price = match job.model.provider {
        ProviderKind::Script => Some(pricing::Price { input_per_mtok: 0.0, output_per_mtok: 0.0, cache_read_per_mtok: None, cache_write_per_mtok: None }),
        _ => pricing::builtin_price(&job.model.name),
    };
    let mut state = RunState {
        history: vec![Message::user(prompt)],
        budget: Budget::new(job.limits.clone()),
        final_text: String::new(),
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
            price,
        },
        system: SystemPrompt::build(&workspace, policy.mode(), job.rules.clone(), args.format == Format::Json),
        hooks: &NoHooks,
    };
    let outcome = std::panic::AssertUnwindSafe(agent.run(&mut state))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".to_owned());
            Outcome::Internal(format!("panic in the agent loop: {msg}"))
        });
    signals.abort();
    stop.token().cancel();
    let (status, reason, limit) = classify(&outcome, &job);
    emitter.emit(Event::RunCompleted {
        status,
        exit_code: status.exit_code(),
        reason,
        limit,
        result: state.final_text.clone(),
        num_turns: state.budget.turns,
        duration_ms: state.budget.elapsed_ms(),
        usage: state.budget.usage,
        total_cost_usd: state.budget.cost_usd,
        cost_unknown: state.budget.cost_usd.is_none(),
    });
    result_sink.update(|r| r.checklist = shared.checklist());
    let result = result_sink.snapshot();
    if let Err(e) = write_json(&out_dir.join("result.json"), &result, &redactor) {
        tracing::error!("cannot write result.json: {e}");
    }
    Ok(result)
}
