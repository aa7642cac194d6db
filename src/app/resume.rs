//! `cn-run --resume RUN|latest [JOB]`: continue a run where it stopped — after a crash, a
//! SIGKILL, a limit or an interrupt — in the same folder, without losing or repeating a
//! turn. The run's stored configuration comes back (its flags, trust included: an
//! untrusted run stays untrusted, with its base ref), and only the flags given to the
//! resume are laid over it (`Settings::overlay`). A finished run can be continued with a
//! new instruction (`-p`).

use std::path::{Path, PathBuf};

use super::console::{start_failed, usage_error};
use super::run_cmd::print_results;
use crate::cli::RunArgs;
use crate::config::{Call, RunConfig, Settings};
use crate::job::{self, Job, LoadOptions};
use crate::observability::LogHandle;
use crate::run::start_error::RunError;
use crate::run::{self, RunOptions};
use crate::session::Session;

/// The flags the run was started with: the stored configuration's, or for a session
/// written before it was stored, its recorded command-line words.
fn stored_settings(session: &Session) -> Result<Settings, RunError> {
    match &session.job.config {
        Some(view) => Ok(view.flags.clone()),
        None => Ok(Settings::from_recorded_args(&session.job.args)?),
    }
}

/// The job to continue with: a JOB given now, else the recorded text (the file only for a
/// session that kept none), else (an ad-hoc run) the one `-p` describes.
fn resume_job(
    args: &RunArgs,
    settings: &Settings,
    session: &Session,
    prompt: Option<&str>,
    run_dir: &Path,
) -> Result<Job, RunError> {
    let mut opts = LoadOptions {
        params: settings.policy.params.clone(),
        kept_files: None,
    };
    if let Some(path) = args.jobs.first() {
        return Ok(job::load_file(path, &opts)?);
    }
    // The files the job names, too, as the first run read them.
    opts.kept_files = crate::run::resume_trust::kept_job_files(run_dir);
    // The job text as the first run read it, never the file as it is now: the workspace
    // (where job files often live) is the model's to write.
    let file = session.job.file.as_ref().map(PathBuf::from);
    match (&file, &session.job.text) {
        (f, Some(text)) => Ok(job::load_str(text, &session.job.name, f.as_deref(), &opts)?),
        (Some(f), None) if f.is_file() => Ok(job::load_file(f, &opts)?),
        (None, None) => super::adhoc::adhoc_job(settings, prompt.unwrap_or("-")),
        _ => Err(RunError::Usage(format!(
            "session {} was an ad-hoc run; give the job again: cn-run --resume {} -p PROMPT …",
            session.session_id, session.session_id
        ))),
    }
}

/// The resumed run's configuration: the stored flags, the ones given now over them.
fn resume_config(
    args: &RunArgs,
    given: Settings,
    session: &Session,
    prompt: Option<&str>,
    run_dir: &Path,
) -> Result<RunConfig, RunError> {
    let stored = stored_settings(session)?;
    if stored.upload_url_given && given.upload_url.is_none() {
        eprintln!(
            "warning: run {} was started with --upload-url; the URL is a secret and is not kept, so this resumed run does not upload there: give --upload-url again to keep uploading",
            session.session_id
        );
    }
    let settings = stored.overlay(given);
    let job = resume_job(args, &settings, session, prompt, run_dir)?;
    let call = Call {
        format: args.format,
        out: None,
        jobs_in_call: 1,
        html: args.html.map(|s| s == crate::cli::Switch::On),
        answers: super::call_plan::answers(args),
        elsewhere: false,
    };
    Ok(RunConfig::resolve(job, settings, call)?)
}

pub(super) async fn resume(id: &str, given: &RunArgs, log: &LogHandle) -> i32 {
    // A run folder from elsewhere: a store's run, an archive, another checkout.
    let located = crate::run::resume_moved::locate(id, given.out.as_deref()).await;
    let id = match (&located, &given.out) {
        // `latest` with `--out DIR` is the run in DIR, never the newest of DIR's siblings,
        // which the run's commands may have made (`--out runs/a`: `runs/forged`).
        (Ok(local), Some(out)) if local == "latest" => out.to_string_lossy().into_owned(),
        (Ok(local), _) => local.clone(),
        (Err(_), _) => id.to_owned(),
    };
    let id = id.as_str();
    if let Err(e) = located {
        return start_failed(e.into());
    }
    if id == "latest"
        && given.out.is_none()
        && let Some(why) = super::resume_latest::refused_from(Path::new("."))
    {
        return start_failed(RunError::Usage(why));
    }
    let root = given
        .out
        .as_ref()
        .and_then(|o| o.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from(".cn-run"));
    let prompt = given.prompt.clone();
    let mut flags = given.settings.clone();
    // A run whose workspace is elsewhere now is re-rooted (checked, its diff written in):
    // the resume then runs as if `-C` named the new place.
    let opened = crate::run::resume_open::open(&root, id, prompt.clone()).and_then(|mut o| {
        let path = o.path.clone();
        let asked = flags.policy.workspace.as_deref();
        if let Some(moved) = crate::run::resume_moved::reroot(&path, &mut o.session, asked)? {
            flags.policy.workspace = Some(moved);
        }
        Ok(o)
    });
    let (config, opened) = match opened.and_then(|o| {
        let dir = o.path.parent().unwrap_or(Path::new("."));
        Ok((
            resume_config(given, flags, &o.session, prompt.as_deref(), dir)?,
            o,
        ))
    }) {
        Ok(c) => c,
        Err(e) => return start_failed(e),
    };
    // From here on only the resolved configuration is read.
    let opts = RunOptions {
        early: std::sync::Mutex::default(),
        log,
        worktree: None,
    };
    let mut resume = opened.into_resume();
    resume.approvals =
        match crate::run::user_hooks::approvals(config.answers(), &resume.session.history) {
            Ok(a) => a,
            Err(e) => return start_failed(RunError::Usage(e)),
        };
    let format = config.format();
    match run::run_job(config, &opts, Some(resume)).await {
        Ok(result) => {
            print_results(format, std::slice::from_ref(&result), &[]);
            result.status.exit_code()
        }
        Err(e) => {
            let _ = usage_error(&e.message);
            e.status.exit_code()
        }
    }
}
