//! [`RunConfig::resolve`]: the one function that turns the flags and a loaded job into the
//! run's configuration. Each value is decided here, once, with its source: a flag wins over
//! the job, the job over the environment, the environment over the default.

use std::path::PathBuf;
use std::time::Duration;

use super::policy::{PolicyFlags, check_flag_tools};
use super::{RunConfig, Settings, Source};
use crate::agent::AgentConfig;
use crate::agent::budget::{max_calls_per_response, run_timeout};
use crate::cli::Format;
use crate::context::pricing;
use crate::job::{self, Job};
use crate::provider::RetryPolicy;
use crate::untrusted::Trust;

/// Why a configuration cannot be resolved: the command line or the job asks for something
/// that cannot be (exit 2, nothing ran).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// A flag's value is wrong (`--timeout soon`, `--allow Bsh(x)`).
    #[error("{0}")]
    Flag(String),
    /// The policy cannot be built: a permissions file that is not there or not valid, a
    /// base ref that does not resolve.
    #[error("{0}")]
    Policy(String),
    /// The base ref of `--untrusted` does not give repository files.
    #[error(transparent)]
    BaseRef(#[from] crate::repo_files::BaseRefError),
    /// The workspace named by `-C` or the job does not exist.
    #[error("workspace {}: {source}", .path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Call-wide settings that are not part of a run's saved configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Call {
    pub format: Format,
    pub out: Option<PathBuf>,
    pub jobs_in_call: usize,
    /// `--html on|off` (`None`: the job's `outputs.html`).
    pub html: Option<bool>,
    /// `--approve`, `--deny`, `--reason` (a resume's answers to waiting calls).
    pub answers: super::Answers,
    /// The run happens on another machine (`export`) or later from another state
    /// (`schedule`): the workspace is made absolute but not required to exist here.
    pub elsewhere: bool,
}

impl RunConfig {
    /// The run's configuration from its job and the flags.
    pub(crate) fn resolve(
        mut job: Job,
        settings: Settings,
        call: Call,
    ) -> Result<RunConfig, ConfigError> {
        check_flag_tools(&PolicyFlags::from(&settings))?;
        let timeout_flag = apply_overrides(&mut job, &settings)?;
        let workspace = workspace(&job, &settings, call.elsewhere)?;
        let key_env = key_env(&job);
        let (timeout, job_source) = run_timeout(&job.limits);
        let timeout_source = if timeout_flag { "flag" } else { job_source };
        let (context_length, context_length_source) = match job.model.context_length {
            Some(n) => (n, "job"),
            None => (default_context_length(&job.model.name), "model family"),
        };
        let trust = Trust::new(
            settings.policy.untrusted || !job.untrusted_paths.is_empty(),
            job.untrusted_paths.clone(),
        );
        let agent = agent_config(&job, &settings, trust.clone());
        Ok(RunConfig {
            base_ref: base_ref(&job, &settings),
            key_env,
            upload_url: settings.upload_url.clone(),
            store: store(&job, &settings)?,
            workspace,
            trust,
            context_length,
            context_length_source,
            timeout,
            timeout_source,
            agent,
            format: call.format,
            out: call.out.map(|o| std::path::absolute(&o).unwrap_or(o)),
            jobs_in_call: call.jobs_in_call.max(1),
            html: call.html.unwrap_or(job.html),
            require_sandbox: settings.require_sandbox || job.tools.bash_require_sandbox,
            params: settings.policy.params.clone(),
            answers: call.answers,
            flags: settings,
            job,
        })
    }
}

/// The run store: `--store`, else the job's `store:` (a URL with a credential in it is a
/// usage error).
fn store(job: &Job, s: &Settings) -> Result<Option<String>, ConfigError> {
    let url = s.store.clone().or_else(|| job.store.clone());
    if let Some(u) = &url {
        crate::store::check_url(u)
            .map_err(|why| ConfigError::Flag(format!("--store {u}: {why}")))?;
    }
    Ok(url)
}

/// Command-line values that override the job's; true when `--timeout` was given.
fn apply_overrides(job: &mut Job, s: &Settings) -> Result<bool, ConfigError> {
    let m = &mut job.model;
    if let Some(p) = s.provider {
        m.provider = p;
    }
    replace(&mut m.name, s.model.clone());
    m.api_base = s.api_base.clone().or(m.api_base.take());
    m.api_key_env = s.api_key_env.clone().or(m.api_key_env.take());
    m.script = s.script.clone().or(m.script.take());
    m.max_tokens = s.max_tokens.or(m.max_tokens);
    let l = &mut job.limits;
    l.max_turns = s.max_turns.or(l.max_turns);
    l.max_cost_usd = s.max_cost_usd.or(l.max_cost_usd);
    if let Some(t) = &s.timeout {
        let parsed =
            job::parse_duration(t).map_err(|e| ConfigError::Flag(format!("--timeout: {e}")))?;
        l.timeout = Some(parsed);
    }
    Ok(s.timeout.is_some())
}

fn replace<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// `-C`, else the job's, else the current directory; canonical (absolute only for a run
/// placed elsewhere).
fn workspace(job: &Job, s: &Settings, elsewhere: bool) -> Result<PathBuf, ConfigError> {
    let dir = s
        .policy
        .workspace
        .clone()
        .or_else(|| job.workspace.path.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    if elsewhere {
        return Ok(std::path::absolute(&dir).unwrap_or(dir));
    }
    dir.canonicalize()
        .map_err(|source| ConfigError::Workspace { path: dir, source })
}

/// The environment variable that holds the provider's key: the job's `api_key_env`, else
/// the provider's usual one (none for the script provider).
pub(crate) fn key_env(job: &Job) -> Option<String> {
    let usual = job.model.provider.family().key_env;
    job.model
        .api_key_env
        .clone()
        .or_else(|| usual.map(str::to_owned))
}

/// The trusted base: `--base-ref`, the job's `base_ref`, or `origin/$GITHUB_BASE_REF`.
fn base_ref(job: &Job, s: &Settings) -> Option<String> {
    s.policy
        .base_ref
        .clone()
        .or_else(|| job.base_ref.clone())
        .or_else(|| {
            std::env::var("GITHUB_BASE_REF")
                .ok()
                .filter(|b| !b.is_empty())
                .map(|b| format!("origin/{b}"))
        })
}

fn agent_config(job: &Job, s: &Settings, trust: Trust) -> AgentConfig {
    AgentConfig {
        model: job.model.name.clone(),
        max_tokens: job.model.max_tokens,
        temperature: job.model.temperature,
        on_ask: s.on_ask.unwrap_or(job.permissions.on_ask),
        retry: retry_policy(job),
        idle_timeout: job.model.idle_timeout.unwrap_or(Duration::from_secs(300)),
        price: price_for(job),
        trust,
        text_tools: job.model.tool_call_format == crate::job::file::ToolCallFormat::Text,
        max_calls: max_calls_per_response(&job.limits),
    }
}

/// Where `on_ask` came from.
pub(super) fn on_ask_source(s: &Settings) -> Source {
    if s.on_ask.is_some() { "flag" } else { "job" }
}

/// The context window of a model that the job does not describe: the provider's published
/// size for well-known families, else 128k.
fn default_context_length(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    if m.contains("gpt-4.1") || m.contains("gemini") {
        1_000_000
    } else if m.contains("claude")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
    {
        200_000
    } else if m.contains("gpt-5") {
        400_000
    } else {
        128_000
    }
}

fn price_for(job: &Job) -> Option<pricing::Price> {
    if let Some(p) = job.model.pricing {
        return Some(p);
    }
    if !job.model.provider.family().network {
        // Nothing is sent anywhere: nothing costs.
        return Some(pricing::Price {
            input_per_mtok: 0.0,
            output_per_mtok: 0.0,
            cache_read_per_mtok: None,
            cache_write_per_mtok: None,
        });
    }
    pricing::builtin_price(&job.model.name)
}

fn retry_policy(job: &Job) -> RetryPolicy {
    let mut p = RetryPolicy::default();
    if let Some(n) = job.model.max_retries {
        p.max_retries = n;
    }
    if let Some(d) = job.model.initial_retry_delay {
        p.initial_delay = d;
        p.max_delay = p.max_delay.max(d);
    }
    p
}
