//! `cn-run validate JOB…`: every problem of every job file, with file:line:column and the
//! field, exit 2 if there is any. Nothing runs and no secret value is printed.

use std::io::Write;
use std::path::Path;

use crate::cli::ValidateArgs;
use crate::exit_code::Status;
use crate::job::{self, JobError, LoadOptions, Locator, Problem, ProviderKind};
use crate::provider::script::ScriptClient;

/// Extra checks that need more than the job module: the script file must parse.
fn script_problems(path: &Path, job: &job::Job) -> Vec<Problem> {
    let (ProviderKind::Script, Some(script)) = (job.model.provider, &job.model.script) else {
        return Vec::new();
    };
    match ScriptClient::from_file(script, job.model.name.clone()) {
        Ok(_) => Vec::new(),
        Err(e) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let pos = Locator::new(&text).value("model.script");
            vec![Problem {
                file: path.display().to_string(),
                line: pos.map_or(1, |p| p.line),
                column: pos.map_or(1, |p| p.column),
                field: "model.script".to_owned(),
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
            Ok(job) => problems.extend(script_problems(path, &job)),
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
