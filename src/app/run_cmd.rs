//! `cn-run [run] ...`: load every job of the command line and resolve it into its
//! `RunConfig` (a bad one runs nothing), run them (one, or several at once), then say what
//! stdout carries and write the call's own reports; the exit code is the worst job's.

use super::adhoc::adhoc_job;
use crate::cli::{Format, RunArgs};
use crate::config::RunConfig;
use crate::exit_code::Status;
use crate::job::{self, LoadOptions};
use crate::observability::LogHandle;
use crate::report::RunResult;
use crate::run::start_error::{RunError, StartError};

use super::call_plan::CallPlan;
use super::console::{start_failed, stdout, stdout_json, usage_error};
use super::runtime::{Runtime, block_on};
use super::{parallel, parallel_report, resume};

/// Every job of the command line, resolved with the flags into its `RunConfig`. Any
/// problem in any of them runs nothing: each job that did not load or resolve is a
/// [`StartError`] of its own (a wrong command line one without a job).
fn load_jobs(args: &RunArgs, plan: &CallPlan) -> Result<Vec<RunConfig>, Vec<StartError>> {
    let settings = args.settings.clone();
    let opts = LoadOptions {
        params: args.settings.policy.params.clone(),
        ..Default::default()
    };
    let mut jobs = Vec::new();
    if let Some(prompt) = &args.prompt {
        if !args.jobs.is_empty() {
            return Err(vec![StartError::from(RunError::Usage(
                "give either job files or -p PROMPT, not both".to_owned(),
            ))]);
        }
        jobs.push(adhoc_job(&settings, prompt).map_err(|e| vec![StartError::from(e)])?);
    }
    let mut problems = Vec::new();
    for path in &args.jobs {
        match job::load_file(path, &opts) {
            Ok(j) => jobs.push(j),
            Err(e) => problems.push(StartError::of_file(path, e)),
        }
    }
    if jobs.is_empty() && problems.is_empty() {
        return Err(vec![StartError::from(RunError::Usage(
            "nothing to run: give a job file (cn-run JOB.yaml) or -p PROMPT; see cn-run --help"
                .to_owned(),
        ))]);
    }
    let mut configs = Vec::new();
    let calls = plan.job_calls(&jobs);
    for (job, call) in jobs.into_iter().zip(calls) {
        let (name, source) = (job.name.clone(), job.source.clone());
        match RunConfig::resolve(job, settings.clone(), call) {
            Ok(c) => configs.push(c),
            Err(e) => {
                problems.push(StartError::from(RunError::from(e)).for_job(&name, source.as_deref()))
            }
        }
    }
    if problems.is_empty() {
        Ok(configs)
    } else {
        Err(problems)
    }
}

/// `cn-run [run] ...` with the telemetry the environment asks for, flushed before the
/// process exits whatever the outcome (bounded by the export timeout).
pub(super) fn run_command(args: RunArgs, log: &LogHandle) -> i32 {
    let log = log.with_telemetry();
    let code = run_jobs_command(args, &log);
    if let Some(t) = &log.telemetry {
        t.shutdown();
    }
    code
}

/// Load the jobs (a bad one runs nothing), open a lone job's checkpointer at once, then
/// run them in the async runtime.
fn run_jobs_command(args: RunArgs, log: &LogHandle) -> i32 {
    let args = match args.normalized() {
        Ok(a) => a,
        Err(pointer) => return usage_error(&pointer),
    };
    if let Some(id) = args.resume.clone() {
        return block_on(Runtime::Lone, async {
            resume::resume(&id, &args, log).await
        });
    }
    let plan = CallPlan::from(&args);
    let jobs = match load_jobs(&args, &plan) {
        Ok(j) => j,
        Err(not_started) => return finish_call(&plan, &[], &not_started),
    };
    let early = early_checkpoints(&jobs, &plan);
    let runtime = match jobs.len() {
        1 => Runtime::Lone,
        _ => Runtime::Shared,
    };
    block_on(runtime, run_jobs(jobs, plan, log, early))
}

/// A lone job's checkpointer, opened before the runtime is built: the git status it
/// takes (which the first request waits for) then overlaps with the rest of the set-up.
/// None for several jobs (each gets a worktree), a copied workspace, or no checkpoints.
fn early_checkpoints(
    jobs: &[RunConfig],
    plan: &CallPlan,
) -> Option<crate::run::checkpoints::Early> {
    let [config] = jobs else {
        return None;
    };
    let isolated = plan.isolate == Some(crate::cli::Isolate::Worktree);
    let job = config.job();
    if !job.git.checkpoints || job.workspace.copy || isolated {
        return None;
    }
    Some(crate::run::checkpoints::Early::open(config.workspace()))
}

async fn run_jobs(
    jobs: Vec<RunConfig>,
    plan: CallPlan,
    log: &LogHandle,
    early: Option<crate::run::checkpoints::Early>,
) -> i32 {
    // Several jobs' own folder (their summary.json, junit.xml) is the call's for its life.
    let call_folder = match parallel::lock_call_folder(jobs.len(), plan.out.as_deref()) {
        Ok(lock) => lock,
        Err(e) => return start_failed(e),
    };
    let mut results: Vec<RunResult> = Vec::new();
    let mut start_errors: Vec<StartError> = Vec::new();
    for outcome in parallel::run_all(jobs, &plan, log, early).await {
        match outcome {
            Ok(result) => results.push(result),
            Err(e) => start_errors.push(e),
        }
    }
    if let Some(lock) = &call_folder {
        lock.release();
    }
    finish_call(&plan, &results, &start_errors)
}

/// The end of a call: why each job that did not start (stderr), what stdout carries, the
/// call's own report (several jobs, or one that did not start), `--junit`; the exit code
/// is the worst job's — or exit 6 when a report asked for could not be written.
fn finish_call(plan: &CallPlan, results: &[RunResult], start_errors: &[StartError]) -> i32 {
    for e in start_errors {
        let _ = usage_error(&e.message);
    }
    print_results(plan.format, results, start_errors);
    let mut worst = parallel_report::worst(results, start_errors);
    // A report that cannot be written is the environment's failure (exit 6).
    let mut unwritten = || {
        if Status::InternalError.severity() > worst.severity() {
            worst = Status::InternalError;
        }
    };
    if !parallel_report::write_call(plan.out.as_deref(), results, start_errors) {
        unwritten();
    }
    if let Some(path) = &plan.junit {
        let suites = parallel_report::suites(results, start_errors);
        let xml = crate::report::junit::render(suites);
        if let Err(e) = crate::out_file::write_whole(path, &[xml.as_bytes()]) {
            let _ = usage_error(&format!("cannot write {}: {e}", path.display()));
            unwritten();
        }
    }
    worst.exit_code()
}

pub(crate) fn print_results(format: Format, results: &[RunResult], start_errors: &[StartError]) {
    match format {
        Format::Text => {
            // Only a complete answer: a run stopped by a limit, a signal or a provider
            // failure may hold the first half of one (it is in result.json, marked so).
            for r in results.iter().filter(|r| r.agent_finished) {
                if !r.result.trim().is_empty() {
                    stdout(&format!("{}\n", r.result.trim_end()));
                }
            }
        }
        Format::Json if results.len() + start_errors.len() > 1 => {
            let summary = parallel_report::summary(results, start_errors);
            stdout_json(&summary);
        }
        Format::Json | Format::StreamJson => {
            for r in results {
                let mut line = serde_json::to_string(r).unwrap_or_default();
                if format == Format::Json && results.len() == 1 {
                    line = serde_json::to_string_pretty(r).unwrap_or_default();
                }
                stdout(&format!("{line}\n"));
            }
        }
    }
}
