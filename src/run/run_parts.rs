//! The parts of a run that are plain functions of the job: ids, limits, prices, the
//! system prompt, the session's job record, outcome classification, and signals.

use std::io::Read as _;
use std::path::Path;

use super::start_error::RunError;
use crate::agent::{Outcome, StopCause, StopSignal, SystemPrompt};
use crate::cli::Format;
use crate::config::RunConfig;
use crate::exit_code::{Limit, Status};
use crate::job::Job;
use crate::session::JobRecord;
use crate::tools::ToolLimits;

/// A new run id: sortable by time (UTC, like every timestamp we write; reading the
/// local zone would scan the tz database at start), unique enough to share a folder.
pub(crate) fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    format!(
        "{}-{:06x}",
        now.strftime("%Y%m%d-%H%M%S"),
        fastrand::u32(..0x100_0000)
    )
}

pub(crate) fn read_stdin_prompt() -> Result<String, RunError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| RunError::Usage(format!("cannot read the prompt from stdin: {e}")))?;
    if text.trim().is_empty() {
        return Err(RunError::Usage(
            "the prompt is `-` but stdin was empty".to_owned(),
        ));
    }
    Ok(text.trim().to_owned())
}

/// Status, reason and limit of an outcome (a limit named with the value the run resolved).
pub(crate) fn classify(
    outcome: &Outcome,
    config: &crate::config::RunConfig,
) -> (Status, String, Option<Limit>) {
    let job = &config.job;
    match outcome {
        Outcome::Completed => (Status::Success, "the agent finished".to_owned(), None),
        Outcome::Failed(r) => (
            Status::Failed,
            format!("the agent reported failure: {r}"),
            None,
        ),
        Outcome::Rejected(r) | Outcome::Truncated(r) | Outcome::Filtered(r) => {
            (Status::Failed, r.clone(), None)
        }
        Outcome::ApprovalRequired(r) => (Status::ApprovalRequired, r.clone(), None),
        Outcome::Limit(l) => {
            let value = match l {
                Limit::MaxTurns => job.limits.max_turns.map(|v| v.to_string()),
                Limit::Timeout => Some(format!("{} s", config.timeout.as_secs_f64())),
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

/// The run's signal listener, alive until the run has written its last file.
pub(crate) struct Signals {
    pub task: tokio::task::JoinHandle<()>,
    /// Cancelled by the first SIGINT or SIGTERM (never by the time limit): the steps after
    /// the agent (artifacts, uploads) give up at once when it is.
    pub interrupt: tokio_util::sync::CancellationToken,
}

/// Stop the run on SIGINT or SIGTERM, and say so to the steps after the agent: a CI
/// runner's cancel (SIGINT, then SIGTERM 7.5 s later, then SIGKILL 2.5 s after that) is
/// answered in every phase, with result.json written. The handlers are installed now, not
/// when the task first runs: a lone run on the one-thread runtime may not yield before its
/// first tool call starts, and a signal in between would kill the process with the default
/// action (no result.json, nothing flushed).
pub(crate) fn listen_for_signals(stop: StopSignal) -> Signals {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = tokio_util::sync::CancellationToken::new();
    let told = interrupt.clone();
    let streams = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    );
    let task = tokio::spawn(async move {
        let (Ok(mut int), Ok(mut term)) = streams else {
            return;
        };
        loop {
            let got = tokio::select! {
                got = int.recv() => got,
                got = term.recv() => got,
            };
            if got.is_none() {
                return;
            }
            stop.stop(StopCause::Interrupted);
            told.cancel();
        }
    });
    Signals { task, interrupt }
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

/// The system message with the rules that always apply; `rules` are the job's and the
/// workspace's (conditional ones join later, when the run touches a matching file).
/// `status` is the git status (whether the workspace is a repository, and the text):
/// the checkpointer's, which reads the tree anyway, or taken for this call.
#[allow(clippy::too_many_arguments)]
pub(crate) fn system_prompt(
    job: &Job,
    rules: &[crate::rules::RuleDef],
    workspace: &Path,
    mode: crate::permissions::Mode,
    format: Format,
    repo: &crate::repo_files::RepoFiles,
    trust: &crate::untrusted::Trust,
    status: (bool, String),
) -> SystemPrompt {
    let always: Vec<crate::rules::RuleDef> = rules
        .iter()
        .filter(|r| matches!(r.applies, crate::rules::Applies::Always))
        .cloned()
        .collect();
    let mut system = SystemPrompt::build_with_status(
        workspace,
        mode,
        always,
        format == Format::Json && job.output_schema.is_none(),
        repo,
        status,
    );
    if let Some(text) = trust.instructions() {
        system.add(text);
    }
    if let Some(schema) = &job.output_schema {
        system.add(crate::structured::instruction(schema));
    }
    system
}

/// How to rebuild the run on `--resume`: the job file (and its text) and the resolved
/// configuration, whose flags the resume restores.
pub(crate) fn job_record(config: &RunConfig) -> JobRecord {
    let job = &config.job;
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
        params: config.settings.params.clone(),
        args: Vec::new(),
        upload_url_given: config.upload_url.is_some(),
        config: Some(config.view()),
    }
}
