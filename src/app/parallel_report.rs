//! Several jobs in one call, seen as one: each job's own output folder (`--out DIR/<job>`),
//! and at the top a combined junit.xml and a summary.json whose status and exit code are
//! the process's (a job that could not start counts, as exit 2).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::start_error::StartError;
use crate::exit_code::Status;
use crate::job::Job;
use crate::report::RunResult;

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

/// The summary of a multi-job call (printed with `--format json`, written as summary.json).
pub(crate) fn summary(results: &[RunResult], start_errors: &[StartError]) -> Value {
    let status = worst(results, start_errors);
    let errors: Vec<&str> = start_errors.iter().map(|e| e.message.as_str()).collect();
    json!({
        "type": "summary",
        "status": status,
        "exit_code": status.exit_code(),
        "is_error": status != Status::Success,
        "jobs": results.len() + start_errors.len(),
        "results": results,
        "errors": errors,
    })
}

/// The folder for the combined files: `--out DIR`, or `.cn-run/parallel-<id>`.
fn top_dir(out: Option<&Path>) -> PathBuf {
    out.map_or_else(
        || PathBuf::from(".cn-run").join(format!("parallel-{}", super::run_parts::new_run_id())),
        Path::to_path_buf,
    )
}

/// Writes junit.xml (one suite per job) and summary.json at the top of a multi-job call,
/// names the folder on stderr, and in GitHub Actions writes the step outputs of the call.
pub(crate) fn write_top(
    out: Option<&Path>,
    results: &[RunResult],
    start_errors: &[StartError],
) -> bool {
    let dir = top_dir(out);
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let suites = results
        .iter()
        .filter_map(|r| r.junit_suite.clone())
        .collect();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("junit.xml"), crate::report::junit::render(suites)))
        .and_then(|()| {
            let text =
                serde_json::to_string_pretty(&summary(results, start_errors)).unwrap_or_default();
            std::fs::write(dir.join("summary.json"), text + "\n")
        });
    match &written {
        Ok(()) => tracing::info!(
            "the combined junit.xml and summary.json are in {}",
            dir.display()
        ),
        Err(e) => tracing::error!("cannot write the combined report in {}: {e}", dir.display()),
    }
    if crate::report::github::is_actions() {
        let worst = worst(results, start_errors);
        crate::report::github::append_to_env_file(
            "GITHUB_OUTPUT",
            &crate::report::github::call_outputs(results, worst, &dir),
        );
    }
    written.is_ok()
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
