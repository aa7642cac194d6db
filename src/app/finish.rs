//! Everything after the agent stops: artifacts, the diff and rollback, the final events,
//! result.json, junit.xml and the GitHub Actions outputs.

use std::path::Path;

use super::outputs;
use super::session_hooks::SessionHooks;
use crate::agent::{Outcome, RunState};
use crate::events::{Changes, Event};
use crate::exit_code::{Limit, Status};
use crate::job::Job;
use crate::redact::Redactor;
use crate::report::{RunResult, github, rebuild};
use crate::tools::ToolShared;

/// How the attempts ended, classified.
pub(crate) struct Finished<'a> {
    pub outcome: &'a Outcome,
    pub status: Status,
    pub reason: String,
    pub limit: Option<Limit>,
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
        emitter.emit(Event::ArtifactCollected(a.clone()));
    }
    hooks.finish(state, f.status, shared.checklist());
    if let Some(c) = checkpoints {
        emitter.emit(Event::ChangesRecorded(changes(c, diff.as_ref(), storage)));
    }
    super::uploads::upload_artifacts(
        job,
        &sinks.result.snapshot().run_id,
        &artifacts,
        redactor,
        emitter,
    )
    .await;
    if let Some(handle) = uploads {
        let patch = diff.as_ref().map(|d| d.path.clone());
        super::uploads::finish(handle, hooks.path.clone(), patch, emitter).await;
    }
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
        agent_finished: matches!(f.outcome, Outcome::Completed | Outcome::Rejected(_)),
        checklist: shared.checklist(),
    });
    // Everything result.json says is in the events now: the files are their fold.
    let mut result = sinks.result.snapshot();
    let text = rebuild::result_text(&result, redactor);
    if let Err(e) = crate::out_file::write_whole(&out_dir.join("result.json"), &[text.as_bytes()]) {
        tracing::error!("cannot write result.json: {e}");
    }
    let (suite, xml) = rebuild::junit_xml(&result, redactor);
    result.junit_suite = Some(suite);
    if let Err(e) = std::fs::write(out_dir.join("junit.xml"), xml) {
        tracing::error!("cannot write junit.xml: {e}");
    }
    if result.report_path.is_some() {
        write_report(out_dir, redactor);
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

/// report.html: the fold of the events.jsonl just written (as `cn-run report` folds it).
fn write_report(out_dir: &Path, redactor: &Redactor) {
    let path = out_dir.join(crate::report::html::FILE_NAME);
    let written = crate::report::html::rebuild(out_dir, redactor)
        .map_err(|e| e.to_string())
        .and_then(|html| {
            crate::out_file::write_whole(&path, &[html.as_bytes()]).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        tracing::error!("cannot write {}: {e}", path.display());
    }
}

/// The `changes.recorded` event: diff.patch and its stats, the checkpoints, the storage.
fn changes(
    c: &super::checkpoints::Checkpoints,
    diff: Option<&super::checkpoints::WrittenDiff>,
    storage: Option<(Vec<crate::checkpoint::Skipped>, u64)>,
) -> Changes {
    let (skipped, git_added_bytes) = match storage {
        Some((skipped, added)) => (skipped, Some(added)),
        None => (Vec::new(), None),
    };
    Changes {
        patch_path: diff.map(|d| d.path.display().to_string()),
        diff: diff.map(|d| d.stat),
        secret_in_diff: diff.is_some_and(|d| d.secret),
        files: diff.map(|d| d.files.clone()).unwrap_or_default(),
        checkpoints: c.list(),
        skipped,
        git_added_bytes,
    }
}
