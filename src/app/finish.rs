//! Everything after the agent stops: artifacts, the diff and rollback, the final events,
//! result.json, junit.xml and the GitHub Actions outputs.

use std::path::Path;

use super::outputs;
use super::run_parts::write_json;
use super::session_hooks::SessionHooks;
use crate::agent::{Outcome, RunState};
use crate::events::Event;
use crate::exit_code::{Limit, Status};
use crate::job::Job;
use crate::redact::Redactor;
use crate::report::{RunResult, github};
use crate::tools::ToolShared;

/// How the attempts ended, classified.
pub(crate) struct Finished<'a> {
    pub outcome: &'a Outcome,
    pub status: Status,
    pub reason: String,
    pub limit: Option<Limit>,
    pub report: &'a super::attempts::AttemptsReport,
    /// Jobs run by this call (they share one step summary and one set of step outputs).
    pub jobs_in_call: usize,
}

/// Everything after the agent stops: artifacts, the final events, result.json,
/// junit.xml, and the GitHub Actions outputs.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn finish(
    job: &Job,
    state: &RunState,
    shared: &ToolShared,
    sinks: &outputs::Sinks,
    hooks: &SessionHooks,
    out_dir: &Path,
    redactor: &Redactor,
    f: Finished<'_>,
    checkpoints: Option<&super::checkpoints::Checkpoints>,
    uploads: Option<crate::upload::UploaderHandle>,
    isolation: Option<&str>,
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
    // What the run added to .git is measured before older runs (or this one) go.
    let storage = checkpoints.and_then(|c| c.storage());
    if let Some(c) = checkpoints {
        c.keep_runs();
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
    let artifacts_upload = super::uploads::upload_artifacts(
        job,
        &sinks.result.snapshot().run_id,
        &artifacts,
        redactor,
        emitter,
    )
    .await;
    let upload = match uploads {
        Some(handle) => {
            let patch = diff.as_ref().map(|(p, _, _)| p.clone());
            Some(super::uploads::finish(handle, hooks.path.clone(), patch, emitter).await)
        }
        None => None,
    };
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
        if let Some((skipped, added)) = storage {
            r.skipped = skipped;
            r.git_added_bytes = Some(added);
        }
        r.upload = upload;
        r.artifacts_upload = artifacts_upload;
        r.isolation = isolation.map(str::to_owned);
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
        let budget = github::STEP_SUMMARY_LIMIT / f.jobs_in_call;
        github::append_to_env_file(
            "GITHUB_STEP_SUMMARY",
            &redactor.redact(&github::summary(&result, budget)),
        );
        // Several jobs: the call writes the outputs once, for all (app::run_jobs).
        if f.jobs_in_call == 1 {
            github::append_to_env_file(
                "GITHUB_OUTPUT",
                &redactor.redact(&github::outputs(&result)),
            );
        }
    }
    result
}
