//! `cn-run validate JOB…`: every problem of every job file, with file:line:column and the
//! field, exit 2 if there is any. Nothing runs and no secret value is printed.

use std::io::Write;
use std::path::Path;

use crate::cli::ValidateArgs;
use crate::exit_code::Status;
use crate::job::{self, JobError, LoadOptions, Locator, Problem};

/// Extra checks that need more than the job module: the provider family's own check of
/// its settings, with no key and no network (the script family: its script file parses).
pub(super) fn family_problems(path: &Path, job: &job::Job) -> Vec<Problem> {
    let Some(offline) = &job.model.provider.family().offline_check else {
        return Vec::new();
    };
    let settings = crate::run::setup::client_settings(job, None, Vec::new());
    match (offline.check)(&settings) {
        Ok(()) => Vec::new(),
        Err(e) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let pos = Locator::new(&text).value(offline.field);
            vec![Problem {
                file: path.display().to_string(),
                line: pos.map_or(1, |p| p.line),
                column: pos.map_or(1, |p| p.column),
                field: offline.field.to_owned(),
                message: e.to_string(),
            }]
        }
    }
}

pub(super) fn run(args: &ValidateArgs) -> i32 {
    let opts = LoadOptions {
        params: args.params.clone(),
        ..Default::default()
    };
    let mut problems: Vec<Problem> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for path in &args.jobs {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if crate::job::template::has_raw(&text) {
            warnings.push(format!(
                "warning: {}: `| raw` puts a parameter into the text unquoted; in a check's `run` a value with `;`, `$(…)` or a newline runs as shell code",
                path.display()
            ));
        }
        match job::load_file(path, &opts) {
            Ok(job) => problems.extend(family_problems(path, &job)),
            Err(JobError::Invalid(p)) => problems.extend(p),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let ok = problems.is_empty() && errors.is_empty();
    if args.json {
        let value = serde_json::json!({"valid": ok, "problems": problems, "errors": errors, "warnings": warnings});
        super::console::stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    } else {
        let mut err = std::io::stderr().lock();
        for p in &problems {
            let _ = writeln!(err, "{p}");
        }
        for e in errors.iter().chain(&warnings) {
            let _ = writeln!(err, "{e}");
        }
        if ok {
            let _ = writeln!(err, "{} job file(s) valid", args.jobs.len());
        }
    }
    if ok { 0 } else { Status::Invalid.exit_code() }
}
