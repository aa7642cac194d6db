//! Why a run could not start, as a typed error, and which outcome that is. The exit code
//! itself is decided in one place only (`Status::exit_code`, the README's table); this file
//! only says which class each failure belongs to: a wrong job or command line is `Invalid`
//! (exit 2, nothing ran); a run folder, a workspace copy, a worktree, git, the session file
//! or a crash is the environment (`InternalError`, exit 6), said in words with what to do.

use std::path::{Path, PathBuf};

use crate::exit_code::Status;
use crate::job::{JobError, Problem};
use crate::worktree::WorktreeError;

/// A run that could not start, typed by what went wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The job file is wrong (its problems are located: file:line:column).
    #[error(transparent)]
    Job(#[from] JobError),
    /// The flags and the job do not resolve into a configuration (a bad `--timeout`, a
    /// workspace that is not there).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The command line or a setting of the job is wrong (a missing key, an unknown tool in
    /// `--allow`, a permissions file that is not there).
    #[error("{0}")]
    Usage(String),
    /// The model's key or a header names an environment variable that is not set.
    #[error(transparent)]
    ModelSetting(#[from] super::setup::ModelSettingError),
    /// The job's MCP server settings cannot be made into configs (an unset `${NAME}`).
    #[error(transparent)]
    Mcp(#[from] super::extensions::McpConfigError),
    /// The run folder cannot be made or written.
    #[error("{}", run_folder_message(.dir, .source))]
    RunFolder {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// Another process holds the run folder (a run on the same `--out`, or the run a
    /// resume names, still going).
    #[error(
        "the run folder {} is in use by {holder}: one process at a time writes a run folder. Give --out another folder, or wait until that run has ended (then --resume continues it)", .dir.display()
    )]
    Busy { dir: PathBuf, holder: String },
    /// A file of the run folder cannot be opened (events.jsonl).
    #[error(
        "cannot write the run's files: {}: {source}. cn-run writes result.json, events.jsonl and the session in the run folder; give --out a writable folder", .path.display()
    )]
    RunFiles {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The workspace could not be copied for `workspace.copy`.
    #[error(transparent)]
    Workspace(#[from] super::workspace::WorkspaceError),
    /// The job's own git worktree (`--isolate worktree`) could not be made.
    #[error("{job}: cannot make the run's git worktree: {source}")]
    Worktree { job: String, source: WorktreeError },
    /// git failed on the workspace (its status for the system prompt).
    #[error("git failed on the workspace: {0}")]
    Git(String),
    /// The session to resume is not there (the command line is wrong), or cannot be read
    /// (the environment).
    #[error("{}", session_message(.0))]
    Session(#[from] crate::session::SessionError),
    /// The model client could not be built (TLS roots, the HTTP stack).
    #[error("cannot build the model client: {0}")]
    Client(String),
    /// A run from elsewhere (a store, an archive, another checkout) cannot resume here.
    #[error(transparent)]
    Moved(#[from] super::resume_moved::MoveError),
    /// A panic caught at the job boundary.
    #[error("the run crashed: {0}")]
    Panic(String),
}

impl RunError {
    /// The outcome class of this failure (its exit code comes from `Status`).
    pub(crate) fn status(&self) -> Status {
        match self {
            RunError::Job(_)
            | RunError::Config(_)
            | RunError::Usage(_)
            | RunError::ModelSetting(_)
            | RunError::Mcp(_) => Status::Invalid,
            RunError::Session(e) if e.is_not_found() => Status::Invalid,
            RunError::Moved(e) => e.status(),
            // No repository to make a worktree of: the command line asked for something the
            // workspace cannot give, and nothing ran.
            RunError::Worktree {
                source: WorktreeError::NoRepository(_),
                ..
            } => Status::Invalid,
            RunError::RunFolder { .. }
            | RunError::Busy { .. }
            | RunError::RunFiles { .. }
            | RunError::Workspace(_)
            | RunError::Worktree { .. }
            | RunError::Git(_)
            | RunError::Session(_)
            | RunError::Client(_)
            | RunError::Panic(_) => Status::InternalError,
        }
    }

    /// The run folder `dir` cannot be made or written.
    pub(crate) fn run_folder(dir: &Path, e: std::io::Error) -> Self {
        RunError::RunFolder {
            dir: dir.to_path_buf(),
            source: e,
        }
    }
}

/// A run that could not start, as reported: the message printed, the status it counts
/// as, and what the outputs need to show it where it belongs (the job, its file, the
/// place in the file). Made only from a [`RunError`], so the class is never guessed where
/// the error is caught.
#[derive(Debug, Clone)]
pub(crate) struct StartError {
    pub message: String,
    pub status: Status,
    /// The job's name, or its file's path when the file did not load; empty until
    /// [`StartError::for_job`] says which job it was.
    pub job: String,
    /// Where in the job file the failure is.
    pub at: Box<Whereabouts>,
}

/// Where a failure to start is: the job file, its located problems, the field.
#[derive(Debug, Clone, Default)]
pub(crate) struct Whereabouts {
    /// The job file, when there is one.
    pub file: Option<String>,
    /// The located problems of an invalid job file.
    pub problems: Vec<Problem>,
    /// The job field the failure is about (`model.api_key_env`), to locate it in the file.
    pub field: Option<String>,
}

impl From<RunError> for StartError {
    fn from(e: RunError) -> Self {
        let problems = match &e {
            RunError::Job(j) => j.problems().to_vec(),
            _ => Vec::new(),
        };
        let field = match &e {
            RunError::ModelSetting(m) => Some(m.field()),
            _ => None,
        };
        StartError {
            status: e.status(),
            message: e.to_string(),
            job: String::new(),
            at: Box::new(Whereabouts {
                file: problems.first().map(|p| p.file.clone()),
                problems,
                field,
            }),
        }
    }
}

impl StartError {
    /// The run folder `dir` cannot be made or written.
    pub(crate) fn run_folder(dir: &Path, e: &std::io::Error) -> Self {
        RunError::run_folder(dir, std::io::Error::new(e.kind(), e.to_string())).into()
    }

    /// The same failure, said of `job` (loaded from `file`, when it came from one).
    pub(crate) fn for_job(mut self, job: &str, file: Option<&Path>) -> Self {
        job.clone_into(&mut self.job);
        if self.at.file.is_none() {
            self.at.file = file.map(|f| f.display().to_string());
        }
        self
    }

    /// A job file that did not load: its path names the job.
    pub(crate) fn of_file(path: &Path, e: JobError) -> Self {
        let name = path.display().to_string();
        StartError::from(RunError::Job(e)).for_job(&name, Some(path))
    }

    /// Where in its file the failure is: each located problem, or the field it is about
    /// (found in the file), or nothing.
    pub(crate) fn places(&self) -> Vec<Problem> {
        if !self.at.problems.is_empty() {
            return self.at.problems.clone();
        }
        let (Some(file), Some(field)) = (&self.at.file, &self.at.field) else {
            return Vec::new();
        };
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let Some(pos) = crate::job::Locator::new(&text).value(field) else {
            return Vec::new();
        };
        vec![Problem {
            file: file.clone(),
            line: pos.line,
            column: pos.column,
            field: field.clone(),
            message: self.message.clone(),
        }]
    }
}

fn session_message(e: &crate::session::SessionError) -> String {
    if e.is_not_found() {
        e.to_string()
    } else {
        format!("cannot read the session to resume: {e}")
    }
}

fn run_folder_message(dir: &Path, e: &std::io::Error) -> String {
    let mut message = format!(
        "cannot write the run folder {}: {e}. cn-run writes result.json, events.jsonl and \
         the session there",
        dir.display()
    );
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        let uid = rustix::process::getuid().as_raw();
        message.push_str(&format!(
            "; this user (uid {uid}) may not write it. In Docker on a mounted checkout, run \
             as the checkout's owner (docker run --user \"$(id -u):$(id -g)\" …) or give \
             --out a writable folder"
        ));
    } else {
        message.push_str("; give --out a folder that can be created");
    }
    message
}

#[cfg(test)]
#[path = "start_error_tests.rs"]
mod tests;
