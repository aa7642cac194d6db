//! `cn-run --resume RUN|latest [JOB]`: continue a run where it stopped — after a crash, a
//! SIGKILL, a limit or an interrupt — with the job and flags it started with (flags given
//! now win), in the same folder, without losing or repeating a turn. A finished run can
//! be continued with a new instruction (`-p`).

use std::path::{Path, PathBuf};

use clap::Parser;

use super::run::{self, Resume, RunOptions};
use super::{apply_overrides, print_results, usage_error};
use crate::cli::{Cli, RunArgs};
use crate::conversation::Message;
use crate::job::{self, Job, LoadOptions};
use crate::observability::LogHandle;
use crate::session::{Session, SessionState, find_session};

/// The current command line without `--resume X` (and without the `run` word).
fn current_argv() -> Vec<String> {
    let mut out = Vec::new();
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "run") {
        args.next();
    }
    while let Some(a) = args.next() {
        if a == "--resume" {
            args.next();
        } else if !a.starts_with("--resume=") {
            out.push(a);
        }
    }
    out
}

/// The job to continue with: a JOB given now, else the recorded file, else its recorded text.
/// The recorded flags, less the trust flags given again now (a flag twice is a usage
/// error). Trust can only be kept or added on resume: there is no flag that lowers it.
fn recorded_not_repeated(recorded: &[String], current: &[String]) -> Vec<String> {
    let given = |flag: &str| {
        current
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let mut out = Vec::new();
    let mut it = recorded.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--untrusted" if given("--untrusted") => {}
            "--base-ref" if given("--base-ref") => {
                it.next();
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

fn resume_job(args: &RunArgs, session: &Session) -> Result<Job, String> {
    let opts = LoadOptions {
        params: args.params.clone(),
    };
    if let Some(path) = args.jobs.first() {
        return job::load_file(path, &opts).map_err(|e| e.to_string());
    }
    let file = session.job.file.as_ref().map(PathBuf::from);
    match (&file, &session.job.text) {
        (Some(f), _) if f.is_file() => job::load_file(f, &opts).map_err(|e| e.to_string()),
        (f, Some(text)) => {
            job::load_str(text, &session.job.name, f.as_deref(), &opts).map_err(|e| e.to_string())
        }
        _ => Err(format!(
            "session {} was an ad-hoc run; give the job again: cn-run --resume {} -p PROMPT …",
            session.session_id, session.session_id
        )),
    }
}

pub(super) async fn resume(id: &str, given: &RunArgs, log: &LogHandle) -> i32 {
    let root = given
        .out
        .as_ref()
        .and_then(|o| o.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from(".cn-run"));
    let path = match find_session(&root, id) {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    let mut session = match Session::load(&path) {
        Ok(s) => s,
        Err(e) => return super::start_failed(super::start_error::RunError::Session(e)),
    };
    for note in &session.notes {
        eprintln!("warning: {note}");
    }
    let mut argv = vec!["cn-run".to_owned()];
    let current = current_argv();
    argv.extend(recorded_not_repeated(&session.job.args, &current));
    argv.extend(current);
    let mut args = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli.run,
        Err(e) => {
            return usage_error(&format!(
                "cannot combine the recorded flags with these: {e}"
            ));
        }
    };
    args.resume = None;
    args.out = None;
    if session.job.upload_url_given && args.upload_url.is_none() {
        eprintln!(
            "warning: run {} was started with --upload-url; the URL is a secret and is not kept, so this resumed run does not upload there: give --upload-url again to keep uploading",
            session.session_id
        );
    }
    let prompt = args.prompt.take();
    let job = if session.job.file.is_none() && session.job.text.is_none() && args.jobs.is_empty() {
        super::adhoc_job(&args, prompt.as_deref().unwrap_or("-"))
    } else {
        resume_job(&args, &session)
    };
    let mut job = match job {
        Ok(j) => j,
        Err(e) => return usage_error(&e),
    };
    if let Err(e) = apply_overrides(&mut job, &args) {
        return usage_error(&e);
    }
    if session.state == SessionState::Finished {
        match prompt {
            Some(p) if p != "-" => {
                session.history.push(Message::user(p));
                session.state = SessionState::Running;
            }
            _ => {
                return usage_error(&format!(
                    "run {} already finished ({}); continue it with a new instruction: --resume {id} -p PROMPT",
                    session.session_id,
                    session.status.as_deref().unwrap_or("unknown")
                ));
            }
        }
    }
    let opts = RunOptions {
        args: &args,
        early: Default::default(),
        log,
        isolation: None,
    };
    match run::run_job(job, &opts, Some(Resume { path, session })).await {
        Ok(result) => {
            print_results(&args, std::slice::from_ref(&result), &[]);
            result.status.exit_code()
        }
        Err(e) => {
            let _ = usage_error(&e.message);
            e.status.exit_code()
        }
    }
}
