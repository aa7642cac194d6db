//! Step 6 of a run: its conversation — the prompt (the job's, or stdin), the recorded
//! history of a resumed run or a new one, the session log it is kept in (opened before the
//! first event), and the system prompt once the git status is known.

use std::io::Read as _;
use std::path::Path;

use super::guard::Guard;
use super::place::Placed;
use super::session_hooks::SessionHooks;
use super::start_error::RunError;
use super::tools::{Base, Tools};
use crate::agent::{Budget, RunState, SystemPrompt};
use crate::cli::Format;
use crate::config::RunConfig;
use crate::conversation::Message;
use crate::events::now;
use crate::job::Job;
use crate::session::{JobRecord, SESSION_VERSION, Session};
use crate::upload::UploaderHandle;

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

/// The conversation to run: the recorded one of a resumed run (its budget restored), or a
/// new one from the prompt, with the session it is kept in.
pub(crate) fn conversation(
    config: &RunConfig,
    resume: Option<crate::run::Resume>,
    placed: &Placed,
    prompt: Option<String>,
) -> (RunState, Session) {
    let mut budget = Budget::new(config.job().limits.clone());
    if let Some(r) = resume {
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
    } else {
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

/// The session log (opened now, before the first event) and the uploader.
pub(crate) fn open_session(
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
        config.job(),
        config.upload_url(),
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
    let status = if let Some(text) = status {
        (true, text)
    } else {
        let ws = placed.workspace.clone();
        tokio::task::spawn_blocking(move || crate::agent::git_status(&ws))
            .await
            .map_err(|e| RunError::Git(e.to_string()))?
    };
    Ok(system_prompt(
        config.job(),
        &guard.rules,
        &placed.workspace,
        tools.policy.mode(),
        config.format(),
        &guard.repo_files,
        config.trust(),
        status,
    ))
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
    let job = config.job();
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
        params: config.params().to_vec(),
        args: Vec::new(),
        upload_url_given: config.upload_url().is_some(),
        config: Some(config.view()),
    }
}
