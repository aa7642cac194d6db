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

/// Everything a run needs to know before it starts, decided once.
#[derive(Debug, Clone)]
pub(crate) struct RunConfig {
    /// The job with the command-line overrides applied (model, limits, durations parsed).
    pub job: Job,
    /// The flags that shaped it, as given (what the session keeps for `--resume`).
    pub settings: Settings,
    /// The workspace the job names or `-C` gives, absolute and canonical (a copied
    /// workspace or a worktree replaces it when the run is placed).
    pub workspace: PathBuf,
    /// Trust: `--untrusted` or the job's `untrusted_paths`, with the run's marker token.
    pub trust: Trust,
    /// The trusted commit repository instructions come from in untrusted mode.
    pub base_ref: Option<String>,
    /// The environment variable the provider's key is read from (`api_key_env` or the
    /// provider's usual one; none for the script provider).
    pub key_env: Option<String>,
    /// `--upload-url` (a secret: never stored, never printed).
    pub upload_url: Option<String>,
    /// The run store's URL (`--store`, else the job's `store:`); it holds no credential.
    pub store: Option<String>,
    /// The model's context window: the job's, else the model family's known size.
    pub context_length: u64,
    pub context_length_source: Source,
    /// The run's time limit and whether it came from a flag, the job or the default.
    pub timeout: Duration,
    pub timeout_source: Source,
    /// Model, retry, price and loop settings the agent runs with.
    pub agent: AgentConfig,
    /// What stdout carries.
    pub format: Format,
    /// `--out DIR`, absolute.
    pub out: Option<PathBuf>,
    /// How many jobs this call runs (the step summary is shared between them).
    pub jobs_in_call: usize,
    /// Whether the run folder gets report.html (`--html`, else the job's `outputs.html`).
    pub html: bool,
}

impl RunConfig {
    /// The command-line policy flags.
    pub(crate) fn policy_flags(&self) -> PolicyFlags<'_> {
        PolicyFlags::from(&self.settings)
    }

    /// The same run placed in `workspace` (the throwaway worktree `--isolate worktree`
    /// made for it): the one change a resolved configuration takes, made here so the job
    /// and the run agree on where they work.
    pub(crate) fn placed_in(mut self, workspace: PathBuf) -> RunConfig {
        self.job.workspace.path = Some(workspace.clone());
        self.workspace = workspace;
        self
    }

    /// Whether commands must run fully contained (`--require-sandbox` or the job's).
    pub(crate) fn require_sandbox(&self) -> bool {
        self.settings.require_sandbox || self.job.tools.bash_require_sandbox
    }
}

#[cfg(test)]
mod tests;
