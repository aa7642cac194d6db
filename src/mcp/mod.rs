//! MCP servers declared in the job: all started together before the first turn, their tools
//! offered as `mcp__<server>__<tool>`, and all stopped when the run ends.
//!
//! Every call into rmcp (the official SDK, whose API still changes between minor releases)
//! stays inside this module. A required server that cannot start and list its tools within
//! its timeout fails the run with a message naming it; an optional one is reported as failed
//! and the run goes on without it. No server process outlives the hub, shut down or dropped.

mod child;
mod connect;
mod content;
mod http_guard;
mod http_list;
mod line_guard;
mod names;
mod notices;
mod path_args;
mod retry;
mod start_failure;
mod tool;
mod words;

pub use tool::{McpTool, ToolHints};

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

pub use crate::events::{ServerState, ServerStatus, TransportKind};
use crate::tools::Tool;

/// How long a server gets to start and list its tools when the job does not say.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take when the job does not say.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a server gets to exit after it is asked to, before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// One server from the job, with env and header values already resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The server's name in the job; it becomes the middle part of its tools' names.
    pub name: String,
    pub transport: Transport,
    /// When true, a failed start is a warning and the run goes on without the server.
    pub optional: bool,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout. It gets PATH, HOME and the locale
    /// variables of the run's environment plus `env`, nothing else.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    /// A streamable-HTTP endpoint; `headers` go with every request.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl Transport {
    fn kind(&self) -> TransportKind {
        match self {
            Transport::Stdio { .. } => TransportKind::Stdio,
            Transport::Http { .. } => TransportKind::Http,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// A required server did not start or did not list its tools in time (exit 6).
    #[error("MCP server \"{server}\" failed to start: {reason}")]
    Startup { server: String, reason: String },
    /// The servers as given cannot be started (a duplicate or empty name).
    #[error("MCP server \"{server}\": {reason}")]
    Config { server: String, reason: String },
}

/// A server that started.
struct Live {
    client: connect::Client,
    guard: Option<child::GroupGuard>,
    process: Option<tokio::process::Child>,
}

/// The running servers of one run and the tools they offer.
pub struct McpHub {
    servers: Vec<Live>,
    tools: Vec<Arc<McpTool>>,
    notices: Arc<notices::Notices>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.servers.len())
            .field("tools", &self.tools)
            .finish()
    }
}

/// One server's start: its status, and the live connection plus tools when it is ready.
type Started = (ServerStatus, Option<(Live, Vec<Arc<McpTool>>)>);

impl McpHub {
    /// Start every server at once (the whole start costs the slowest server, not the sum).
    /// Returns the hub and one status per server, in job order. A required server that fails
    /// stops the others and returns [`McpError::Startup`].
    pub async fn start(
        configs: Vec<ServerConfig>,
        base_env: &[(String, String)],
    ) -> Result<(McpHub, Vec<ServerStatus>), McpError> {
        Self::start_traced(configs, base_env, None).await
    }

    /// [`McpHub::start`] in a run's trace: each tool call tells its server the call's trace
    /// context (`_meta.traceparent`, and a `traceparent` header over HTTP).
    pub async fn start_traced(
        configs: Vec<ServerConfig>,
        base_env: &[(String, String)],
        trace: Option<crate::telemetry::RunTrace>,
    ) -> Result<(McpHub, Vec<ServerStatus>), McpError> {
        check_names(&configs)?;
        let notices = Arc::new(notices::Notices::default());
        let mut slots: Vec<Option<Started>> = configs.iter().map(|_| None).collect();
        let mut pending: FuturesUnordered<_> = configs
            .iter()
            .enumerate()
            .map(|(i, config)| {
                let notices = Arc::clone(&notices);
                let trace = trace.clone();
                async move { (i, start_one(config, base_env, notices, trace).await) }
            })
            .collect();
        while let Some((i, (status, live))) = pending.next().await {
            let config = &configs[i];
            if live.is_none() && !config.optional {
                drop(pending);
                let others = slots
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, l)| l.map(|(l, _)| l));
                close_all(others.collect()).await;
                return Err(McpError::Startup {
                    server: config.name.clone(),
                    reason: status.message.unwrap_or_default(),
                });
            }
            if live.is_none() {
                tracing::warn!(server = %config.name, "optional MCP server skipped: {}",
                    status.message.as_deref().unwrap_or(""));
            }
            slots[i] = Some((status, live));
        }
        drop(pending);
        let mut hub = McpHub {
            servers: Vec::new(),
            tools: Vec::new(),
            notices,
        };
        let mut statuses = Vec::new();
        for (status, live) in slots.into_iter().flatten() {
            statuses.push(status);
            if let Some((live, tools)) = live {
                hub.servers.push(live);
                hub.tools.extend(tools);
            }
        }
        Ok((hub, statuses))
    }

    /// One tool per server tool, named `mcp__<server>__<tool>`, in job then server order.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|t| Arc::clone(t) as Arc<dyn Tool>)
            .collect()
    }

    /// The MCP tools with their server and remote names (for logs and the job check).
    pub fn mcp_tools(&self) -> &[Arc<McpTool>] {
        &self.tools
    }

    /// From now on, the servers' progress and log notifications become `mcp.notification`
    /// events (bounded: see `notices.rs`).
    pub fn record_notifications(&self, emitter: Arc<crate::events::Emitter>) {
        self.notices.record_to(emitter);
    }

    /// Ask every server to stop, wait up to two seconds, then kill what is left.
    pub async fn shutdown(self) {
        close_all(self.servers).await;
    }
}

async fn close_all(servers: Vec<Live>) {
    let closing = servers.into_iter().map(|mut live| async move {
        let _ = live.client.close_with_timeout(SHUTDOWN_GRACE).await;
        drop(live.guard);
        // Reap it, so it is gone (not a zombie) when the hub's shutdown returns.
        if let Some(mut process) = live.process {
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, process.wait()).await;
        }
    });
    futures_util::future::join_all(closing).await;
}

/// Start one server; a failure is a status, the caller decides whether it is fatal.
async fn start_one(
    config: &ServerConfig,
    base_env: &[(String, String)],
    notices: Arc<notices::Notices>,
    trace: Option<crate::telemetry::RunTrace>,
) -> Started {
    let started = Instant::now();
    let outcome = connect::open(config, base_env, Arc::clone(&notices)).await;
    let mut status = ServerStatus {
        name: config.name.clone(),
        transport: config.transport.kind(),
        status: ServerState::Failed,
        tools: 0,
        message: None,
        startup_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    let opened = match outcome {
        Ok(opened) => opened,
        Err(failed) => {
            status.message = Some(failed.reason);
            return (status, None);
        }
    };
    let mut taken = HashSet::new();
    let (task_only, offered): (Vec<_>, Vec<_>) = opened
        .tools
        .iter()
        .partition(|t| opened.task_only.contains(&t.name));
    let tools: Vec<Arc<McpTool>> = offered
        .into_iter()
        .map(|t| {
            let name = names::unique(names::exposed_name(&config.name, &t.name), &taken);
            taken.insert(name.clone());
            Arc::new(
                McpTool::new(
                    name,
                    &config.name,
                    t,
                    config.call_timeout,
                    opened.client.peer().clone(),
                    opened.stderr.clone(),
                    Arc::clone(&notices),
                )
                .traced(trace.clone()),
            )
        })
        .collect();
    tracing::info!(server = %config.name, tools = tools.len(), ms = status.startup_ms,
        version = opened.server_version.as_deref().unwrap_or("?"), "MCP server ready");
    status.status = ServerState::Ready;
    status.tools = tools.len();
    if tools.is_empty() {
        status.message = Some("the server offers no tools".into());
    }
    if !task_only.is_empty() {
        let names: Vec<&str> = task_only.iter().map(|t| t.name.as_ref()).collect();
        status.message = Some(format!(
            "not offered: {} (they can only be called as tasks, which cn-run does not do)",
            names.join(", ")
        ));
    }
    let live = Live {
        client: opened.client,
        guard: opened.guard,
        process: opened.process,
    };
    (status, Some((live, tools)))
}

/// Names must be non-empty and distinct once sanitised (they are the tools' namespace).
fn check_names(configs: &[ServerConfig]) -> Result<(), McpError> {
    let mut seen = HashSet::new();
    for config in configs {
        let fail = |reason: &str| McpError::Config {
            server: config.name.clone(),
            reason: reason.to_owned(),
        };
        if config.name.trim().is_empty() {
            return Err(fail("the server name is empty"));
        }
        if !seen.insert(names::sanitize(&config.name)) {
            return Err(fail("another server has the same name"));
        }
    }
    Ok(())
}
