//! Several jobs in one call, seen as one: each job's own output folder (`--out DIR/<job>`),
//! and at the top a combined junit.xml and a summary.json whose status and exit code are
//! the process's. A job that could not start (an invalid file, an unset key) counts, and
//! is shown where its runs would have been: a suite in junit.xml, an item of `results`, a
//! section of the step summary and an `::error` at its place in the file.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use quick_junit::TestSuite;

use crate::exit_code::Status;
use crate::job::Job;
use crate::report::{RunResult, github, junit};
use crate::run::start_error::StartError;

/// Where each job of a multi-job call writes: `--out DIR/<job name>` (made unique), or
/// `None` for the default `.cn-run/<run-id>`.
pub(crate) fn job_out_dirs(jobs: &[Job], out: Option<&Path>) -> Vec<Option<PathBuf>> {
    let Some(top) = out else {
        return vec![None; jobs.len()];
    };
    let mut used: Vec<String> = Vec::with_capacity(jobs.len());
    jobs.iter()
        .map(|job| {
            let base = folder_name(&job.name);
            let mut name = base.clone();
            let mut n = 1;
            while used.contains(&name) {
                n += 1;
                name = format!("{base}-{n}");
            }
            used.push(name.clone());
            Some(top.join(name))
        })
        .collect()
}

/// A job name as one safe path component.
fn folder_name(job: &str) -> String {
    let name: String = job
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.trim_matches('.') {
        "" => "job".to_owned(),
        _ => name,
    }
}

/// The worst status of the jobs, those that could not start included.
pub(crate) fn worst(results: &[RunResult], start_errors: &[StartError]) -> Status {
    let started = results.iter().map(|r| r.status);
    let not_started = start_errors.iter().map(|e| e.status);
    started
        .chain(not_started)
        .max_by_key(|s| s.severity())
        .unwrap_or(Status::Success)
}

/// A job that did not start, as summary.json and the `results` output list it.
fn not_started_item(e: &StartError, junit: Option<&Path>) -> Value {
    json!({
        "job": e.job,
        "file": e.at.file,
        "status": e.status,
        "exit_code": e.status.exit_code(),
        "reason": e.message,
        "problems": e.places(),
        "junit": junit.map(|p| p.display().to_string()),
    })
}

/// The summary of a multi-job call (printed with `--format json`, written as summary.json).
pub(crate) fn summary(results: &[RunResult], start_errors: &[StartError]) -> Value {
    let status = worst(results, start_errors);
    let errors: Vec<&str> = start_errors.iter().map(|e| e.message.as_str()).collect();
    let not_started: Vec<Value> = start_errors
        .iter()
        .filter(|e| !e.job.is_empty())
        .map(|e| not_started_item(e, None))
        .collect();
    json!({
        "type": "summary",
        "status": status,
        "exit_code": status.exit_code(),
        "is_error": status != Status::Success,
        "jobs": results.len() + start_errors.len(),
        "results": results,
        "errors": errors,
        "not_started": not_started,
    })
}

/// The folder for the combined files: `--out DIR`, or `.cn-run/parallel-<id>`, for several
/// jobs; a fresh `.cn-run/<id>` for a lone job that did not start (its `--out` is left as
/// it was: nothing ran, and an earlier run's files there stay whole).
fn top_dir(out: Option<&Path>, several: bool) -> PathBuf {
    let id = crate::run::place::new_run_id();
    match (out, several) {
        (Some(dir), true) => dir.to_path_buf(),
        (None, true) => PathBuf::from(".cn-run").join(format!("parallel-{id}")),
        (_, false) => PathBuf::from(".cn-run").join(id),
    }
}

/// Every suite of the call: the runs' own, and one failed `agent run` per job that did
/// not start.
pub(crate) fn suites(results: &[RunResult], start_errors: &[StartError]) -> Vec<TestSuite> {
    let started = results.iter().filter_map(|r| r.junit_suite.clone());
    let not_started = start_errors
        .iter()
        .filter(|e| !e.job.is_empty())
        .map(|e| junit::not_started_suite(&e.job, e.status, &e.message));
    started.chain(not_started).collect()
}

/// Whether the call needs a report of its own at the top: several jobs, or (in GitHub
/// Actions, where the step's outputs point at it) a lone job that did not start.
fn needs_top(results: &[RunResult], start_errors: &[StartError]) -> bool {
    let named = start_errors.iter().any(|e| !e.job.is_empty());
    results.len() + start_errors.len() > 1 || (named && github::is_actions())
}

/// The report of a whole call: for several jobs, or a lone job that did not start in
/// GitHub Actions, junit.xml
/// (one suite per job) and summary.json at the top (named on stderr); in GitHub Actions
/// the annotations and step summary of each job that did not start and the call's step
/// outputs (a lone started job wrote its own).
/// False when the report could not be written (the call then exits 6).
pub(crate) fn write_call(
    out: Option<&Path>,
    results: &[RunResult],
    start_errors: &[StartError],
) -> bool {
    if !needs_top(results, start_errors) {
        return true;
    }
    let several = results.len() + start_errors.len() > 1;
    let dir = top_dir(out, several);
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let junit_path = dir.join("junit.xml");
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| {
            let xml = junit::render(suites(results, start_errors));
            crate::out_file::write_whole(&junit_path, &[xml.as_bytes()])
        })
        .and_then(|()| {
            let text =
                serde_json::to_string_pretty(&summary(results, start_errors)).unwrap_or_default();
            crate::out_file::write_whole(&dir.join("summary.json"), &[text.as_bytes(), b"\n"])
        });
    match &written {
        Ok(()) => tracing::info!(
            "the combined junit.xml and summary.json are in {}",
            dir.display()
        ),
        Err(e) => tracing::error!("cannot write the combined report in {}: {e}", dir.display()),
    }
    if github::is_actions() {
        github_not_started(start_errors, &junit_path);
        let worst = worst(results, start_errors);
        let items: Vec<Value> = start_errors
            .iter()
            .filter(|e| !e.job.is_empty())
            .map(|e| not_started_item(e, Some(&junit_path)))
            .collect();
        github::append_to_env_file(
            "GITHUB_OUTPUT",
            &github::call_outputs(results, &items, worst, &dir),
        );
    }
    written.is_ok()
}

/// In GitHub Actions, each job that did not start: an `::error` at each place in its file
/// (or on the file), and its section of the step summary.
fn github_not_started(start_errors: &[StartError], junit_path: &Path) {
    let share = github::STEP_SUMMARY_LIMIT / start_errors.len().max(1);
    let mut annotations = String::new();
    for e in start_errors.iter().filter(|e| !e.job.is_empty()) {
        let failure = github::NotStarted {
            job: &e.job,
            file: e.at.file.as_deref(),
            status: e.status,
            message: &e.message,
            places: e.places(),
        };
        annotations.push_str(&github::not_started_annotations(&failure));
        let mut section = github::not_started_summary(&failure, share);
        section.push_str(&format!("JUnit: `{}`\n\n", junit_path.display()));
        github::append_to_env_file(
            "GITHUB_STEP_SUMMARY",
            &crate::redact::redact_output(&section),
        );
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        crate::redact::redact_output(&annotations).as_bytes(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_folders_are_one_safe_component_and_unique() {
        assert_eq!(folder_name("fix lint/../x"), "fix_lint_.._x");
        assert_eq!(folder_name(".."), "job");
        assert_eq!(folder_name("a.b-c_d"), "a.b-c_d");
    }
}
