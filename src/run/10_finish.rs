//! Everything after the agent stops: artifacts, the diff and rollback, the final events,
//! result.json, junit.xml and the GitHub Actions outputs.
//!
//! Every file written here is checked (`RunFiles`): a write that fails makes the run an
//! environment error (exit 6) naming the file and why, and the outcome is only reported as
//! far as the files hold it. A signal (a CI cancel) ends the artifact copies and the
//! uploads at once; result.json is still written, saying the run was interrupted.

use tokio_util::sync::CancellationToken;

use super::prepare::Prepared;
use crate::agent::{Outcome, RunState};
use crate::events::{Changes, Event};
use crate::exit_code::{Limit, Status};
use crate::job::Job;
use crate::report::{RunResult, github, rebuild};
use crate::tools::ArtifactRecord;

/// How the attempts ended, classified.
pub(crate) struct Finished<'a> {
    pub outcome: &'a Outcome,
    pub status: Status,
    pub reason: String,
    pub limit: Option<Limit>,
    /// Jobs run by this call (they share one step summary and one set of step outputs).
    pub jobs_in_call: usize,
}

/// The outcome as it is settled: the run's own, then a signal that came while its
/// outputs were written, then files that could not be written.
struct Verdict {
    status: Status,
    reason: String,
    limit: Option<Limit>,
    interrupted_while: Option<&'static str>,
    files: Option<String>,
}

impl Verdict {
    fn of(f: &Finished<'_>) -> Verdict {
        Verdict {
            status: f.status,
            reason: f.reason.clone(),
            limit: f.limit,
            interrupted_while: None,
            files: None,
        }
    }

    /// A signal came (if `interrupt` says so) while the run was doing `what`.
    fn watch(&mut self, interrupt: &CancellationToken, what: &'static str) {
        if interrupt.is_cancelled() && self.interrupted_while.is_none() {
            self.interrupted_while = Some(what);
        }
    }

    /// What the run's files lack now (lines that waited may have been written since).
    fn files(&mut self, problem: Option<String>) {
        self.files = problem;
    }

    /// Status, reason and limit as reported.
    fn settled(&self) -> (Status, String, Option<Limit>) {
        if let Some(problem) = &self.files {
            let reason = format!("{problem} (the run itself: {})", self.reason);
            return (Status::InternalError, reason, None);
        }
        match self.interrupted_while {
            Some(what) if self.status != Status::Interrupted => (
                Status::Interrupted,
                format!(
                    "interrupted by a signal while {what} (the run itself: {})",
                    self.reason
                ),
                None,
            ),
            _ => (self.status, self.reason.clone(), self.limit),
        }
    }
}

/// Everything after the agent stops: artifacts, the final events, result.json,
/// junit.xml, and the GitHub Actions outputs.
pub(crate) async fn finish(
    job: &Job,
    state: &RunState,
    run: &mut Prepared,
    f: Finished<'_>,
) -> RunResult {
    let interrupt = run.signals.interrupt.clone();
    let mut verdict = Verdict::of(&f);
    let mut artifacts = collect_artifacts(job, run, &interrupt).await;
    verdict.watch(&interrupt, "collecting the artifacts");
    artifacts.extend(run.shared.artifacts());
    let checkpoints = run.checkpoints.clone();
    let checkpoints = checkpoints.as_deref();
    // The diff first, then (on failure, if asked) put the workspace back.
    let diff = checkpoints.and_then(|c| c.write_diff(&run.out_dir, &run.redactor, &run.files));
    if let (true, Some(c)) = (
        f.status != Status::Success && job.git.rollback_on_failure,
        checkpoints,
    ) {
        c.rollback_to_start(&run.shared.workspace);
    }
    // What the run added to .git is measured before older runs (or this one) go.
    let storage = checkpoints.and_then(|c| c.storage());
    if let Some(c) = checkpoints {
        c.keep_runs();
    }
    let emitter = run.emitter.clone();
    for a in &artifacts {
        emitter.emit(Event::ArtifactCollected(a.clone()));
    }
    verdict.watch(&interrupt, "writing the run's outputs");
    verdict.files(run.files.problem());
    run.hooks
        .finish(state, verdict.settled().0, run.shared.checklist());
    if let Some(c) = checkpoints {
        emitter.emit(Event::ChangesRecorded(changes(c, diff.as_ref(), storage)));
    }
    upload(job, run, &artifacts, diff.as_ref(), &interrupt).await;
    verdict.watch(&interrupt, "uploading the session");
    run.files.last_writes();
    verdict.files(run.files.problem());
    for message in run.files.recovered() {
        emitter.emit(Event::Warning { message });
    }
    emitter.emit(completed(state, run, &f, &verdict));
    write_outputs(run, f.jobs_in_call)
}

/// The `run.completed` event: the outcome as settled, and the run's totals.
fn completed(state: &RunState, run: &Prepared, f: &Finished<'_>, verdict: &Verdict) -> Event {
    let (status, reason, limit) = verdict.settled();
    Event::RunCompleted {
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
        agent_finished: matches!(f.outcome, Outcome::Completed | Outcome::Rejected(_)),
        checklist: run.shared.checklist(),
    }
}

/// The job's `artifacts:` copied into the run folder (off the async thread, so a signal is
/// heard while a big file copies); a copy that cannot be written is a failure of the run's
/// files, an unreadable file a warning.
async fn collect_artifacts(
    job: &Job,
    run: &Prepared,
    interrupt: &CancellationToken,
) -> Vec<ArtifactRecord> {
    if job.artifacts.is_empty() {
        return Vec::new();
    }
    let workspace = run.shared.workspace.clone();
    let skip = [run.out_dir.clone(), workspace.join(".git")];
    let (patterns, dest) = (job.artifacts.clone(), run.out_dir.join("artifacts"));
    let stop = interrupt.clone();
    let collected = tokio::task::spawn_blocking(move || {
        crate::artifacts::collect(&patterns, &workspace, &dest, &skip, &|| stop.is_cancelled())
    })
    .await
    .unwrap_or_default();
    for message in collected.warnings {
        run.emitter.emit(Event::Warning { message });
    }
    for (path, e) in &collected.failed {
        run.files.failed(path, e);
    }
    collected.records
}

/// The artifacts' and the session's final uploads (each ended by a signal).
async fn upload(
    job: &Job,
    run: &mut Prepared,
    artifacts: &[ArtifactRecord],
    diff: Option<&super::checkpoints::WrittenDiff>,
    interrupt: &CancellationToken,
) {
    let run_id = run.sinks.result.snapshot().run_id;
    super::uploads::upload_artifacts(
        job,
        &run_id,
        artifacts,
        &run.redactor,
        &run.emitter,
        interrupt,
    )
    .await;
    if let Some(handle) = run.uploads.take() {
        let patch = diff.map(|d| d.path.clone());
        let session = run.hooks.path.clone();
        super::uploads::finish(handle, session, patch, &run.emitter, interrupt).await;
    }
}

/// result.json and junit.xml, the folds of the events, written last; then the GitHub
/// Actions outputs. What the files could not take makes the reported outcome exit 6.
fn write_outputs(run: &Prepared, jobs_in_call: usize) -> RunResult {
    // Everything result.json says is in the events now: the files are their fold.
    let mut result = run.sinks.result.snapshot();
    run.files.flush();
    if !run.files.events_whole() {
        result.files_failed(run.files.problem().unwrap_or_default());
    }
    let redactor = &run.redactor;
    let (suite, xml) = rebuild::junit_xml(&result, redactor);
    result.junit_suite = Some(suite);
    if !run.files.write_whole("junit.xml", &[xml.as_bytes()]) {
        result.files_failed(run.files.problem().unwrap_or_default());
    }
    if !super::file_outputs::write(&run.sinks.file_outputs, &run.files) {
        result.files_failed(run.files.problem().unwrap_or_default());
    }
    // The page folds events.jsonl as written: before result.json, so a page that cannot
    // be written is in result.json's outcome (exit 6) like any other file of the run.
    if result.report_path.is_some() && !write_report(run) {
        result.files_failed(run.files.problem().unwrap_or_default());
    }
    let text = rebuild::result_text(&result, redactor);
    run.files.sync();
    if !run.files.write_whole("result.json", &[text.as_bytes()]) {
        result.files_failed(run.files.problem().unwrap_or_default());
    }
    if github::is_actions() {
        let mut err = std::io::stderr().lock();
        let _ = std::io::Write::write_all(
            &mut err,
            redactor.redact(&github::annotations(&result)).as_bytes(),
        );
        let budget = github::STEP_SUMMARY_LIMIT / jobs_in_call;
        github::append_to_env_file(
            "GITHUB_STEP_SUMMARY",
            &redactor.redact(&github::summary(&result, budget)),
        );
        // Several jobs: the call writes the outputs once, for all (app::run_jobs).
        if jobs_in_call == 1 {
            github::append_to_env_file(
                "GITHUB_OUTPUT",
                &redactor.redact(&github::outputs(&result)),
            );
        }
    }
    result
}

/// report.html: the fold of the events.jsonl just written (as `cn-run report` folds it).
/// False when the page could not be written (the failure kept in the run's files). A page
/// that cannot be folded because events.jsonl is no longer readable (an uncontained
/// command removed it) is logged only: whether the events are whole is the logs' to say.
fn write_report(run: &Prepared) -> bool {
    let name = crate::report::html::FILE_NAME;
    match crate::report::html::rebuild(&run.out_dir, &run.redactor) {
        Ok(html) => run.files.write_whole(name, &[html.as_bytes()]),
        Err(e) => {
            tracing::error!("cannot build {name}: {e}");
            true
        }
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
