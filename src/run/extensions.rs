//! The job's extensions: MCP servers (started before the first turn, every one ready or
//! the run fails with exit 6 naming it — unless it is optional) and skills.

use std::path::Path;
use std::sync::Arc;

use crate::events::{Emitter, Event};
use crate::job::{Job, McpServerSpec};
use crate::mcp::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpHub, ServerConfig, ServerState, ServerStatus,
    Transport,
};
use crate::permissions::Policy;
use crate::repo_files::RepoFiles;
use crate::skills::{SkillsTool, discover, discover_at_base};
use crate::tools::ToolRegistry;

/// Why the job's MCP server settings cannot be made into configs: the job or its
/// environment is wrong (exit 2, nothing ran).
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpConfigError {
    #[error("unclosed `${{` in `{value}`")]
    Unclosed { value: String },
    #[error("environment variable {name} is not set")]
    Unset { name: String },
    /// A value of `command`, `args`, `env:`, `url` or `headers:` that cannot be expanded.
    #[error("mcp_servers.{server}.{key}: {source}")]
    Value {
        server: String,
        key: String,
        source: Box<McpConfigError>,
    },
    #[error("mcp_servers.{server}: no command and no url")]
    NoTransport { server: String },
}

/// `value` with every `${NAME}` replaced by that environment variable (which must be set).
pub(crate) fn expand_env(value: &str) -> Result<String, McpConfigError> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| McpConfigError::Unclosed {
            value: value.to_owned(),
        })?;
        let name = &after[..end];
        let set = std::env::var(name).map_err(|_| McpConfigError::Unset {
            name: name.to_owned(),
        })?;
        out.push_str(&set);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `value` expanded, or the error located at `mcp_servers.<server>.<key>`.
fn located(value: &str, server: &str, key: &str) -> Result<String, McpConfigError> {
    expand_env(value).map_err(|e| McpConfigError::Value {
        server: server.to_owned(),
        key: key.to_owned(),
        source: Box::new(e),
    })
}

fn pairs(list: &[(String, String)], server: &str) -> Result<Vec<(String, String)>, McpConfigError> {
    list.iter()
        .map(|(k, v)| Ok((k.clone(), located(v, server, k)?)))
        .collect()
}

/// MCP server configs with `${NAME}` values resolved (in `command`, `args`, `env`, `url`
/// and `headers`). Made before the run's folder, so a job that cannot be expanded leaves
/// nothing behind; stdio servers start in `workspace` (see [`in_workspace`]).
pub(crate) fn mcp_configs(
    job: &Job,
    workspace: &Path,
) -> Result<Vec<ServerConfig>, McpConfigError> {
    job.mcp_servers
        .iter()
        .map(|s| config(s, workspace))
        .collect()
}

/// The configs with their stdio servers started in `workspace` (the run's placed one, which
/// is a copy for `workspace.copy`).
pub(crate) fn in_workspace(mut configs: Vec<ServerConfig>, workspace: &Path) -> Vec<ServerConfig> {
    for c in &mut configs {
        if let Transport::Stdio { cwd, .. } = &mut c.transport {
            *cwd = workspace.to_path_buf();
        }
    }
    configs
}

fn config(s: &McpServerSpec, workspace: &Path) -> Result<ServerConfig, McpConfigError> {
    let name = &s.name;
    let transport = match (&s.command, &s.url) {
        (Some(command), _) => Transport::Stdio {
            command: located(command, name, "command")?,
            args: (s.args.iter().enumerate())
                .map(|(i, a)| located(a, name, &format!("args[{i}]")))
                .collect::<Result<_, _>>()?,
            env: pairs(&s.env, name)?,
            cwd: workspace.to_path_buf(),
        },
        (None, Some(url)) => Transport::Http {
            url: located(url, name, "url")?,
            headers: pairs(&s.headers, name)?,
        },
        (None, None) => {
            return Err(McpConfigError::NoTransport {
                server: s.name.clone(),
            });
        }
    };
    Ok(ServerConfig {
        name: s.name.clone(),
        transport,
        optional: s.optional,
        startup_timeout: s.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT),
        call_timeout: s.call_timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
    })
}

/// Start the servers, add the rules their tools' annotations call for to the policy (see
/// `permissions::mcp`), and register the tools that policy offers. Returns that policy. `Err`
/// names the server that failed; the run then ends with exit 6.
pub(crate) async fn start_mcp(
    configs: Vec<ServerConfig>,
    base_env: &[(String, String)],
    registry: &mut ToolRegistry,
    policy: &Policy,
    (untrusted, trace): (bool, Option<crate::telemetry::RunTrace>),
) -> Result<(Option<McpHub>, Vec<ServerStatus>, Policy), crate::mcp::McpError> {
    if configs.is_empty() {
        return Ok((None, Vec::new(), policy.clone()));
    }
    let (hub, statuses) = McpHub::start_traced(configs, base_env, trace).await?;
    let policy = mcp_policy(&hub, policy, untrusted);
    for tool in hub.tools() {
        if policy.is_offered(tool.name()) {
            registry.register(tool);
        }
    }
    Ok((Some(hub), statuses, policy))
}

/// `policy` with the rules for the hub's tools.
pub(crate) fn mcp_policy(hub: &McpHub, policy: &Policy, untrusted: bool) -> Policy {
    let hints: Vec<_> = hub.mcp_tools().iter().map(|t| t.policy_hints()).collect();
    policy.with_mcp_tools(&hints, untrusted)
}

/// Events for the servers' start (after `run.started`, which lists their tools).
pub(crate) fn report_mcp(statuses: &[ServerStatus], emitter: &Emitter) {
    for s in statuses {
        emitter.emit(s.to_event());
        if s.status == ServerState::Failed {
            let why = s.message.clone().unwrap_or_default();
            emitter.emit(Event::Warning {
                message: format!("optional MCP server {} is not available: {why}", s.name),
            });
        }
    }
}

/// Register the Skills tool when the workspace or the job has skills. They are read where
/// the run reads repository instructions: the workspace, or in untrusted mode the trusted
/// base commit. Untrusted mode with no base commit offers none (the pull request's names and
/// descriptions would reach the model unmarked), and the warning says so.
pub(crate) fn register_skills(
    job: &Job,
    workspace: &Path,
    registry: &mut ToolRegistry,
    policy: &Policy,
    repo_files: &RepoFiles,
) -> Option<String> {
    let skills = match repo_files {
        RepoFiles::Workdir(_) => discover(workspace, &job.skills),
        // A resume reads the skills its first run read, never the workspace written since.
        RepoFiles::Commit { .. } | RepoFiles::Stored(_) => {
            discover_at_base(repo_files, workspace, &job.skills)
        }
        RepoFiles::Nothing => {
            return (!discover(workspace, &job.skills).is_empty()).then(|| {
                "skills are off in untrusted mode without a base ref: the workspace's skills come from the untrusted changes"
                    .to_owned()
            });
        }
    };
    if skills.is_empty() || !policy.is_offered(crate::catalog::SKILLS.name) {
        return None;
    }
    registry.register(Arc::new(SkillsTool::new(skills, workspace)));
    None
}
