//! `cn-run report RUN`: rebuild a run folder's result.json and junit.xml (and with
//! `--github` the step summary, step outputs and annotations) from its events.jsonl —
//! for a run that was killed before it wrote them, or whose files were lost. The files
//! are the ones the run writes (the same fold, the same renderers).

use std::path::{Path, PathBuf};

use super::{stdout, usage_error};
use crate::cli::ReportArgs;
use crate::exit_code::Status;
use crate::redact::Redactor;
use crate::report::{RunResult, github, rebuild};

/// The run folder `RUN` names: a folder, or a run id (or `latest`) under `.cn-run/`.
fn folder(run: &str) -> Result<PathBuf, String> {
    let direct = Path::new(run);
    if direct.join("events.jsonl").is_file() {
        return Ok(direct.to_path_buf());
    }
    let root = Path::new(".cn-run");
    if root.join(run).join("events.jsonl").is_file() {
        return Ok(root.join(run));
    }
    if run == "latest" {
        let session = crate::session::find_session(root, run).map_err(|e| e.to_string())?;
        if let Some(dir) = session.parent() {
            return Ok(dir.to_path_buf());
        }
    }
    Err(format!(
        "no events.jsonl in `{run}` (nor in .cn-run/{run}): give a run folder"
    ))
}

pub(super) fn run(args: &ReportArgs) -> i32 {
    let dir = match folder(&args.run) {
        Ok(d) => d,
        Err(e) => return usage_error(&e),
    };
    // The events were masked by the run; this masks the secrets of this environment too.
    let redactor = Redactor::new([], std::env::vars(), &[]);
    let rebuilt = match rebuild::rebuild(&dir, &redactor) {
        Ok(r) => r,
        Err(e) => return usage_error(&format!("cannot rebuild the run's outputs: {e}")),
    };
    if args.github
        && let Err(e) = github_files(&rebuilt.result, &redactor)
    {
        return usage_error(&e);
    }
    for (name, text) in [
        ("result.json", &rebuilt.result_json),
        ("junit.xml", &rebuilt.junit_xml),
    ] {
        let path = dir.join(name);
        if let Err(e) = crate::out_file::write_whole(&path, &[text.as_bytes()]) {
            let _ = usage_error(&format!("cannot write {}: {e}", path.display()));
            return Status::InternalError.exit_code();
        }
    }
    stdout(&rebuilt.result_json);
    0
}

/// The step summary and step outputs, appended where GitHub Actions reads them, and the
/// annotations on stderr.
fn github_files(result: &RunResult, redactor: &Redactor) -> Result<(), String> {
    for var in ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"] {
        if std::env::var_os(var).is_none() {
            return Err(format!(
                "--github writes to ${var}, which is not set (run it in a GitHub Actions step)"
            ));
        }
    }
    let summary = github::summary(result, github::STEP_SUMMARY_LIMIT);
    github::append_to_env_file("GITHUB_STEP_SUMMARY", &redactor.redact(&summary));
    let outputs = github::outputs(result);
    github::append_to_env_file("GITHUB_OUTPUT", &redactor.redact(&outputs));
    let annotations = github::annotations(result);
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        redactor.redact(&annotations).as_bytes(),
    );
    Ok(())
}
