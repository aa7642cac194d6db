//! `cn-run report RUN`: rebuild a run folder's result.json, junit.xml and report.html
//! (and with `--github` the step summary, step outputs and annotations) from its
//! events.jsonl — for a run that was killed before it wrote them, or whose files were
//! lost. The files are the ones the run writes (the same fold, the same renderers).
//! `--html FILE` writes the page elsewhere (also for a run that wrote none), `--atif FILE`
//! the run as an ATIF trajectory.

use std::path::{Path, PathBuf};

use super::console::{stdout, usage_error};
use crate::cli::ReportArgs;
use crate::exit_code::Status;
use crate::redact::Redactor;
use crate::report::{RunResult, github, rebuild};
use crate::session::SessionError;

/// Why `cn-run report` cannot do its work; [`ReportError::status`] is its class.
#[derive(Debug, thiserror::Error)]
enum ReportError {
    #[error("no events.jsonl in `{run}` (nor in .cn-run/{run}): give a run folder")]
    NoEvents { run: String },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot rebuild the run's outputs: {0}")]
    Rebuild(#[from] rebuild::EventsError),
    #[error("--github writes to ${var}, which is not set (run it in a GitHub Actions step)")]
    NotInActions { var: &'static str },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ReportError {
    /// A run folder that cannot be written is the environment; the rest is the command line.
    fn status(&self) -> Status {
        match self {
            ReportError::Write { .. } => Status::InternalError,
            ReportError::Session(e) if !e.is_not_found() => Status::InternalError,
            _ => Status::Invalid,
        }
    }
}

/// The run folder `RUN` names: a folder, or a run id (or `latest`) under `.cn-run/`.
fn folder(run: &str) -> Result<PathBuf, ReportError> {
    let direct = Path::new(run);
    if direct.join("events.jsonl").is_file() {
        return Ok(direct.to_path_buf());
    }
    let root = Path::new(".cn-run");
    if root.join(run).join("events.jsonl").is_file() {
        return Ok(root.join(run));
    }
    if run == "latest" {
        let session = crate::session::find_session(root, run)?;
        if let Some(dir) = session.parent() {
            return Ok(dir.to_path_buf());
        }
    }
    Err(ReportError::NoEvents {
        run: run.to_owned(),
    })
}

pub(super) fn run(args: &ReportArgs) -> i32 {
    match rebuild_outputs(args) {
        Ok(result_json) => {
            stdout(&result_json);
            0
        }
        Err(e) => {
            let _ = usage_error(&e.to_string());
            e.status().exit_code()
        }
    }
}

/// Rebuild and write the outputs; result.json's text.
fn rebuild_outputs(args: &ReportArgs) -> Result<String, ReportError> {
    let dir = folder(&args.run)?;
    // The events were masked by the run; this masks the secrets of this environment too.
    let redactor = Redactor::new([], std::env::vars(), &[]);
    let rebuilt = rebuild::rebuild(&dir, &redactor)?;
    if args.github {
        github_files(&rebuilt.result, &redactor)?;
    }
    for (name, text) in [
        ("result.json", &rebuilt.result_json),
        ("junit.xml", &rebuilt.junit_xml),
    ] {
        write(&dir.join(name), text)?;
    }
    let html_path = match (&args.html, &rebuilt.result.report_path) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(_)) => Some(dir.join(crate::report::html::FILE_NAME)),
        (None, None) => None,
    };
    if let Some(path) = html_path {
        write(&path, &crate::report::html::rebuild(&dir, &redactor)?)?;
    }
    if let Some(path) = &args.atif {
        write(path, &crate::report::atif::rebuild(&dir, &redactor)?)?;
    }
    Ok(rebuilt.result_json)
}

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    crate::out_file::write_whole(path, &[text.as_bytes()]).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The step summary and step outputs, appended where GitHub Actions reads them, and the
/// annotations on stderr.
fn github_files(result: &RunResult, redactor: &Redactor) -> Result<(), ReportError> {
    for var in ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"] {
        if std::env::var_os(var).is_none() {
            return Err(ReportError::NotInActions { var });
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
