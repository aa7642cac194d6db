//! Building a run's parts from its job: the model client, the permission policy, the tool
//! set, the environment tools see and the redactor. Anything wrong here is a usage error
//! (exit 2): nothing has run yet.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::start_error::RunError;
use crate::job::Job;
use crate::permissions::{Policy, Source};
use crate::provider::{ClientSettings, FamilyError, ModelClient};
use crate::redact::Redactor;
use crate::sandbox::{SandboxMode, SandboxPolicy, SandboxStatus};
use crate::secret::Secret;
use crate::tools::{self, ToolRegistry};

/// The model client.
pub(crate) struct ClientParts {
    pub client: Arc<dyn ModelClient>,
}

/// A setting of the job's model that the environment does not give (exit 2, nothing ran).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ModelSettingError {
    #[error("model.api_key_env names {name}, but that environment variable is not set")]
    UnsetKey { name: String },
    #[error("header {header} reads ${{{var}}}, which is not set")]
    UnsetHeader { header: String, var: String },
}

impl ModelSettingError {
    /// The job field the setting is in.
    pub(crate) fn field(&self) -> String {
        match self {
            ModelSettingError::UnsetKey { .. } => "model.api_key_env".to_owned(),
            ModelSettingError::UnsetHeader { header, .. } => format!("model.headers.{header}"),
        }
    }
}

/// Why the whole sandbox the run requires cannot be had (the run ends with exit 6).
#[derive(Debug, Clone, thiserror::Error)]
#[error("require_sandbox is set, but {shortfall}")]
pub(crate) struct SandboxRefused {
    pub shortfall: String,
}

/// The API key for the job's provider, read from the variable the configuration names
/// ([`crate::config::key_env`]): a variable the job names must be set; the provider's
/// usual one is used when present.
pub(crate) fn api_key(job: &Job) -> Result<(Option<Secret>, Option<String>), ModelSettingError> {
    if !job.model.provider.family().network {
        return Ok((None, None));
    }
    let Some(name) = crate::config::key_env(job) else {
        return Ok((None, None));
    };
    match std::env::var(&name) {
        Ok(v) if !v.is_empty() => Ok((Some(Secret::new(v)), Some(name))),
        _ if job.model.api_key_env.is_some() => Err(ModelSettingError::UnsetKey { name }),
        _ => Ok((None, None)),
    }
}

/// How the job's provider is reached: the settings both HTTP providers share.
fn connection(
    m: &crate::job::ModelSpec,
    api_base: String,
    api_key: Option<Secret>,
    headers: Vec<(String, String)>,
) -> crate::provider::Connection {
    crate::provider::Connection {
        api_key,
        headers,
        request_timeout: m.request_timeout,
        ..crate::provider::Connection::new(api_base, m.name.clone())
    }
}

/// Header values `${NAME}` come from the environment.
pub(crate) fn headers(job: &Job) -> Result<Vec<(String, String)>, ModelSettingError> {
    job.model
        .headers
        .iter()
        .map(
            |(k, v)| match v.strip_prefix("${").and_then(|s| s.strip_suffix('}')) {
                Some(var) => std::env::var(var).map(|val| (k.clone(), val)).map_err(|_| {
                    ModelSettingError::UnsetHeader {
                        header: k.clone(),
                        var: var.to_owned(),
                    }
                }),
                None => Ok((k.clone(), v.clone())),
            },
        )
        .collect()
}

/// The model client, being built: at once when that is cheap (the script provider, a
/// plain-`http` endpoint), else on a blocking thread, since loading the system's TLS
/// roots takes milliseconds that overlap with the rest of the set-up.
pub(crate) enum ClientTask {
    Ready(Result<ClientParts, RunError>),
    Building(tokio::task::JoinHandle<Result<ClientParts, RunError>>),
}

impl ClientTask {
    pub(crate) fn start(job: &Job) -> ClientTask {
        let needs_tls = job.model.provider.family().network
            && !job
                .model
                .api_base
                .as_deref()
                .is_some_and(crate::provider::plain_http);
        if !needs_tls {
            return ClientTask::Ready(build_client(job));
        }
        let job = job.clone();
        ClientTask::Building(tokio::task::spawn_blocking(move || build_client(&job)))
    }

    pub(crate) async fn wait(self) -> Result<ClientParts, RunError> {
        match self {
            ClientTask::Ready(parts) => parts,
            ClientTask::Building(task) => task
                .await
                .map_err(|e| RunError::Panic(format!("client set-up failed: {e}")))?,
        }
    }
}

/// The client for the job's provider. A setting that is wrong (no key, no script file) is a
/// usage error; an HTTP stack that cannot be built is the environment.
fn build_client(job: &Job) -> Result<ClientParts, RunError> {
    let (key, _) = api_key(job)?;
    let headers = headers(job)?;
    let settings = client_settings(job, key, headers);
    let client = (job.model.provider.family().build)(&settings).map_err(|e| match e {
        FamilyError::Usage(m) => RunError::Usage(m),
        FamilyError::Client(m) => RunError::Client(m),
    })?;
    Ok(ClientParts { client })
}

/// The job's model settings as its family's client reads them.
pub(crate) fn client_settings(
    job: &Job,
    key: Option<Secret>,
    headers: Vec<(String, String)>,
) -> ClientSettings {
    let m = &job.model;
    ClientSettings {
        connection: connection(m, m.api_base.clone().unwrap_or_default(), key, headers),
        stream_usage: m.stream_usage,
        thinking_budget: m.thinking_budget,
        deployment: m.deployment.clone(),
        api_version: m.api_version.clone(),
        script: m.script.clone(),
    }
}

/// Rules of the repository's permissions.yaml that name no existing tool. The file is read
/// when the run starts (and may be shared with `cn`), so these warn instead of failing.
pub(crate) fn repo_rule_warnings(policy: &Policy) -> Vec<String> {
    policy
        .table()
        .into_iter()
        .filter(|r| r.source == Source::RepoFile)
        .filter_map(|r| {
            let m = crate::job::unknown_rule_tool(&r.pattern)?;
            let file = r.file.as_deref().unwrap_or("permissions.yaml");
            Some(format!("{file}: {m} (the rule matches no call)"))
        })
        .collect()
}

/// The environment tools run with: ours, minus the provider key.
pub(crate) fn tool_env(
    key: Option<&Secret>,
    key_env: Option<&str>,
    run_id: &str,
) -> Vec<(String, String)> {
    // No command or server inherits the telemetry configuration or the caller's trace.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, v)| Some(k.as_str()) != key_env && key.is_none_or(|s| s.expose() != v))
        .filter(|(k, _)| !crate::telemetry::settings::is_telemetry_var(k))
        .collect();
    env.push(("CN_RUN".to_owned(), "1".to_owned()));
    env.push(("CN_RUN_RUN_ID".to_owned(), run_id.to_owned()));
    env.push(("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()));
    env.push(("GIT_PAGER".to_owned(), "cat".to_owned()));
    env.push(("PAGER".to_owned(), "cat".to_owned()));
    env
}

pub(crate) fn redactor(
    key: Option<&Secret>,
    job: &Job,
    upload_url: Option<&str>,
    workspace: &std::path::Path,
) -> Redactor {
    // Presigned upload URLs are credentials too, whatever their variable is called.
    let mut names = job.redact.clone();
    if let Some(u) = &job.upload {
        names.extend(u.url_env.iter().cloned());
        names.extend(u.diff_url_env.iter().cloned());
        names.extend(u.artifacts_url_env.iter().cloned());
    }
    let mut values: Vec<&str> = key
        .map(Secret::expose)
        .into_iter()
        .chain(upload_url)
        .collect();
    if let Some(u) = &job.upload {
        values.extend(u.url.as_deref());
        values.extend(u.diff_url.as_deref());
        values.extend(u.artifacts_url.as_deref());
    }
    let configured = configured_secrets(job);
    values.extend(configured.iter().map(String::as_str));
    // A token actions/checkout left in .git/config is in no variable cn-run can see.
    let checkout = crate::redact::git_credentials(workspace);
    values.extend(checkout.iter().map(String::as_str));
    // The collector's credentials (`OTEL_EXPORTER_OTLP_HEADERS`, `x-api-key=…`).
    let otlp = crate::telemetry::settings::header_values(&|n| std::env::var(n).ok());
    values.extend(otlp.iter().map(String::as_str));
    Redactor::new(values, std::env::vars(), &names)
}

/// Secret values the job hands to a server: MCP `env:`/`headers:` and model `headers:`
/// values read from the environment (`${NAME}`) or under a secret-looking name.
fn configured_secrets(job: &Job) -> Vec<String> {
    let pairs = job
        .mcp_servers
        .iter()
        .flat_map(|s| s.env.iter().chain(&s.headers))
        .chain(job.model.headers.iter());
    pairs
        .filter(|(k, v): &&(String, String)| {
            v.contains("${")
                || crate::secret::is_secret_name(k)
                || k.eq_ignore_ascii_case("authorization")
        })
        .filter_map(|(_, v)| super::extensions::expand_env(v).ok())
        .flat_map(|v| {
            // `Bearer TOKEN`: the token alone is the secret too.
            let last = v.split_whitespace().last().map(str::to_owned);
            std::iter::once(v).chain(last)
        })
        .collect()
}

pub(crate) fn registry(policy: &Policy, model: &str) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    for tool in tools::builtin_tools(model) {
        reg.register(tool);
    }
    reg.retain(|t| policy.is_offered(t.name()));
    reg
}

/// `~/x` under the commands' `$HOME`, anything else under the workspace.
fn placed_in(w: &str, workspace: &Path, env: &[(String, String)]) -> PathBuf {
    let home = env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| v);
    match (w.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => Path::new(h).join(rest),
        _ => workspace.join(w),
    }
}

/// The credential locations the job gives back (`tools.bash.readable`): to commands and
/// to cn-run's own file tools alike.
pub(crate) fn bash_readable(job: &Job, workspace: &Path, env: &[(String, String)]) -> Vec<PathBuf> {
    let t = &job.tools;
    t.bash_readable
        .iter()
        .map(|w| placed_in(w, workspace, env))
        .collect()
}

/// The containment of the job's commands, established once: the policy, its status for
/// result.json, and either a warning (`Ok`) or the reason to fail the run (`Err`) when the
/// whole profile cannot be enforced. A read-only run (`--readonly`, plan mode) asks for a
/// read-only sandbox.
pub(crate) fn sandbox(
    ask: &SandboxAsk<'_>,
) -> (
    SandboxPolicy,
    Option<SandboxStatus>,
    Result<Option<String>, SandboxRefused>,
) {
    let policy = sandbox_policy(ask);
    let (policy, probe) = crate::sandbox::establish(policy);
    let status = crate::sandbox::describe(&probe, &policy);
    let verdict = sandbox_verdict(&policy, &probe);
    (policy, Some(status), verdict)
}

/// The run's containment as [`sandbox`] makes it, but on a thread of its own while the
/// run starts (the first command waits for it; `on_ready` is told then) — unless the run
/// requires the whole profile, which it must know before its first turn, or asks for no
/// containment at all: those are settled now.
pub(crate) fn deferred_sandbox(
    ask: &SandboxAsk<'_>,
    on_ready: crate::sandbox::OnReady,
) -> (
    crate::sandbox::Deferred,
    Result<Option<String>, SandboxRefused>,
) {
    let policy = sandbox_policy(ask);
    if policy.is_active() && !policy.require {
        return (crate::sandbox::Deferred::start(policy, on_ready), Ok(None));
    }
    let (policy, probe) = crate::sandbox::establish(policy);
    let verdict = sandbox_verdict(&policy, &probe);
    (crate::sandbox::Deferred::ready(policy, probe), verdict)
}

/// Ok(warning) when the run may go on as it is; Err(reason) when it requires more.
pub(crate) fn sandbox_verdict(
    policy: &SandboxPolicy,
    probe: &crate::sandbox::Probe,
) -> Result<Option<String>, SandboxRefused> {
    let off = (policy.mode == SandboxMode::Off).then(|| {
        "tools.bash.sandbox: off — commands (Bash, background jobs, checks) run uncontained, \
         with cn-run's whole environment, the whole filesystem and the network"
            .to_owned()
    });
    match probe.shortfall() {
        Some(shortfall) if policy.require => Err(SandboxRefused { shortfall }),
        Some(_) if off.is_some() => Ok(off),
        other => Ok(other),
    }
}

/// What a run's containment is made from: the job, where it runs, and what the run asks
/// on top (`require`: the whole profile or fail; `read_only`: a read-only run).
#[derive(Clone, Copy)]
pub(crate) struct SandboxAsk<'a> {
    pub(crate) job: &'a Job,
    pub(crate) workspace: &'a Path,
    pub(crate) out_dir: Option<&'a Path>,
    pub(crate) env: &'a [(String, String)],
    pub(crate) require: bool,
    pub(crate) read_only: bool,
}

/// The containment the job asks for, not established yet.
fn sandbox_policy(ask: &SandboxAsk<'_>) -> SandboxPolicy {
    let SandboxAsk {
        job,
        workspace,
        out_dir,
        env,
        require,
        read_only,
    } = *ask;
    let t = &job.tools;
    let mode = if read_only {
        SandboxMode::ReadOnly
    } else {
        t.bash_sandbox
    };
    let place = |w: &String| placed_in(w, workspace, env);
    let readable = bash_readable(job, workspace, env);
    let mut policy = SandboxPolicy::new(
        mode,
        // `off` means no containment at all, the network included, unless the job says so.
        t.bash_network.unwrap_or(mode == SandboxMode::Off),
        workspace,
        env,
    )
    .with_readable(&readable)
    .with_hosts(t.bash_network_hosts.clone())
    .required(t.bash_require_sandbox || require);
    policy.writable.extend(t.bash_writable.iter().map(place));
    policy.env_names = t.bash_env.clone();
    // The run's records: its folder (wherever `--out` put it), the `.cn-run` holding it,
    // and the workspace's `.cn-run`, where other runs keep theirs — made when missing, so
    // that no command makes a run folder there for `--resume latest` to pick. Only by a
    // run (it has a run folder): `explain` writes nothing.
    if mode != SandboxMode::Off && out_dir.is_some() {
        let _ = super::outputs::cn_run_root_in(workspace);
    }
    let records = out_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(
            out_dir
                .and_then(Path::parent)
                .filter(|p| p.ends_with(super::outputs::ROOT))
                .map(Path::to_path_buf),
        )
        .chain([workspace.join(super::outputs::ROOT)])
        .filter_map(|p| p.canonicalize().ok())
        // Never a folder holding the workspace (a `--parallel` run's worktree lies in `.cn-run`).
        .filter(|p| !workspace.canonicalize().is_ok_and(|w| w.starts_with(p)))
        .collect();
    policy
        .with_git(t.bash_git)
        .with_records(records)
        .with_limits(t.bash_limits)
}
