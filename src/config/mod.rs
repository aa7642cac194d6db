//! The run's configuration, resolved once: ripgrep's LowArgs → HiArgs. The command line
//! ([`Settings`], the flags as given) and the job file (with the repository's files, the
//! environment and the defaults) become one validated [`RunConfig`], made by
//! [`RunConfig::resolve`] and nothing else. `run`, `--parallel`, `--resume`, `explain`,
//! `export` and `schedule` all go through it, so where a flag's value is decided is this module, once:
//!
//! flags + job → `RunConfig` → prepare → execute (agent loop, events) → finish (outputs).
//!
//! The session stores the [`Settings`] (the upload URL, a secret, is never kept) and the
//! [`ConfigView`] of the resolved value; `--resume` restores the settings and lays only the
//! flags given to the resume over them ([`Settings::overlay`]).

mod policy;
mod resolve;
mod settings;
mod view;

use std::path::PathBuf;
use std::time::Duration;

pub(crate) use policy::PolicyFlags;
pub(crate) use resolve::{Call, ConfigError, key_env};
pub use settings::{PolicyArgs, Settings};
pub use view::ConfigView;

use crate::agent::AgentConfig;
use crate::cli::Format;
use crate::job::Job;
use crate::untrusted::Trust;

/// Where a resolved value came from, as `explain` shows it.
pub type Source = &'static str;

/// Everything a run needs to know before it starts, decided once. Its fields are private:
/// [`RunConfig::resolve`] makes it and nothing changes it afterwards; the run reads it
/// through the accessors below. What differs between the jobs of one call (their folders,
/// a `--parallel` job's worktree) is derived from it when the run is placed, never patched in.
#[derive(Debug, Clone)]
pub(crate) struct RunConfig {
    /// The job with the command-line overrides applied (model, limits, durations parsed).
    job: Job,
    /// The flags that shaped it, as given: a record only (what the session keeps for
    /// `--resume`, in [`ConfigView`]); nothing decides anything from it after resolving.
    flags: Settings,
    /// The workspace the job names or `-C` gives, absolute and canonical.
    workspace: PathBuf,
    /// Trust: `--untrusted` or the job's `untrusted_paths`, with the run's marker token.
    trust: Trust,
    /// The trusted commit repository instructions come from in untrusted mode.
    base_ref: Option<String>,
    /// The environment variable the provider's key is read from.
    key_env: Option<String>,
    /// `--upload-url` (a secret: never stored, never printed).
    upload_url: Option<String>,
    /// The run store's URL (`--store`, else the job's `store:`); it holds no credential.
    store: Option<String>,
    /// The model's context window: the job's, else the model family's known size.
    context_length: u64,
    context_length_source: Source,
    /// The run's time limit and where it came from (a flag, the job or the default).
    timeout: Duration,
    timeout_source: Source,
    /// Model, retry, price and loop settings the agent runs with.
    agent: AgentConfig,
    /// `--require-sandbox` or the job's `tools.bash.require_sandbox`.
    require_sandbox: bool,
    /// The job's parameter values from `--param` (kept in the session for `--resume`).
    params: Vec<(String, String)>,
    /// People's answers to the calls a resumed run left waiting.
    answers: Answers,
    /// What stdout carries.
    format: Format,
    /// `--out DIR`, absolute.
    out: Option<PathBuf>,
    /// How many jobs this call runs (the step summary is shared between them).
    jobs_in_call: usize,
    /// Whether the run folder gets report.html (`--html`, else the job's `outputs.html`).
    html: bool,
}

/// `--approve ID`, `--deny ID` and `--reason`: answers to deferred calls of a resumed run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Answers {
    pub approve: Vec<String>,
    pub deny: Vec<String>,
    pub reason: Option<String>,
}

impl RunConfig {
    /// The job with the command-line overrides applied.
    pub(crate) fn job(&self) -> &Job {
        &self.job
    }

    /// The workspace the job names or `-C` gives (a run placed in a copy or a worktree
    /// works in that instead: `run::place`).
    pub(crate) fn workspace(&self) -> &std::path::Path {
        &self.workspace
    }

    pub(crate) fn trust(&self) -> &Trust {
        &self.trust
    }

    pub(crate) fn base_ref(&self) -> Option<&str> {
        self.base_ref.as_deref()
    }

    pub(crate) fn key_env(&self) -> Option<&str> {
        self.key_env.as_deref()
    }

    pub(crate) fn upload_url(&self) -> Option<&str> {
        self.upload_url.as_deref()
    }

    pub(crate) fn store(&self) -> Option<&str> {
        self.store.as_deref()
    }

    /// The model's context window and where it came from.
    pub(crate) fn context_length(&self) -> (u64, Source) {
        (self.context_length, self.context_length_source)
    }

    /// The run's time limit and where it came from.
    pub(crate) fn timeout(&self) -> (Duration, Source) {
        (self.timeout, self.timeout_source)
    }

    pub(crate) fn agent(&self) -> &AgentConfig {
        &self.agent
    }

    /// Whether commands must run fully contained (`--require-sandbox` or the job's).
    pub(crate) fn require_sandbox(&self) -> bool {
        self.require_sandbox
    }

    /// The `--param` values the job was loaded with.
    pub(crate) fn params(&self) -> &[(String, String)] {
        &self.params
    }

    pub(crate) fn answers(&self) -> &Answers {
        &self.answers
    }

    pub(crate) fn format(&self) -> Format {
        self.format
    }

    pub(crate) fn out(&self) -> Option<&std::path::Path> {
        self.out.as_deref()
    }

    pub(crate) fn jobs_in_call(&self) -> usize {
        self.jobs_in_call
    }

    pub(crate) fn html(&self) -> bool {
        self.html
    }

    /// The command-line policy flags (read while the policy is built, in this module).
    fn policy_flags(&self) -> PolicyFlags<'_> {
        PolicyFlags::from(&self.flags)
    }
}

#[cfg(test)]
mod tests;
