//! Opening one MCP server: spawn it (stdio) or reach it (streamable HTTP), run the MCP
//! handshake and list its tools, all within the server's startup timeout.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::child::{self, GroupGuard, StderrTail};
use super::line_guard;
use super::notices::{Listener, Notices};
use super::start_failure::StartFailure;
use super::words::error_words;
use super::{ServerConfig, Transport};

/// The client side of one live connection.
pub(crate) type Client = RunningService<RoleClient, Listener>;

/// A server that finished its handshake and listed its tools.
pub(crate) struct Opened {
    pub(crate) client: Client,
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// Tools that can only be called as tasks.
    pub(crate) task_only: line_guard::TaskOnly,
    pub(crate) guard: Option<GroupGuard>,
    /// The stdio server's process (killed and reaped when dropped).
    pub(crate) process: Option<tokio::process::Child>,
    pub(crate) stderr: StderrTail,
    pub(crate) server_version: Option<String>,
}

/// Why a server did not start; the message is complete (it names the server's command or URL,
/// and quotes its stderr when it wrote any).
pub(crate) struct Failed {
    pub(crate) reason: String,
}

/// Start `config` and list its tools within `config.startup_timeout`.
pub(crate) async fn open(
    config: &ServerConfig,
    base_env: &[(String, String)],
    notices: std::sync::Arc<Notices>,
) -> Result<Opened, Failed> {
    let listener = Listener {
        server: config.name.clone(),
        notices,
        info: client_info(),
    };
    match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if !cwd.is_dir() {
                return Err(Failed {
                    reason: format!("its working directory {} does not exist", cwd.display()),
                });
            }
            let cmd = child::command(command, args, env, cwd, base_env);
            open_stdio(config, command, cmd, listener).await
        }
        Transport::Http { url, headers } => {
            let headers = header_map(headers).map_err(|e| Failed {
                reason: e.to_string(),
            })?;
            let fail = |reason: String| Failed {
                reason: format!("streamable HTTP at {url}: {reason}"),
            };
            let failed = |e: StartFailure| fail(e.to_string());
            let deadline = Instant::now() + config.startup_timeout;
            super::retry::wait_for_listener(url, deadline)
                .await
                .map_err(failed)?;
            let task_only = line_guard::TaskOnly::default();
            let client = super::http_guard::Guarded::new(task_only.clone()).map_err(failed)?;
            let transport = StreamableHttpClientTransport::with_client(
                client,
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers),
            );
            let left = deadline.saturating_duration_since(Instant::now());
            let (client, tools, server_version) =
                handshake(transport, left, listener).await.map_err(|e| {
                    let reason = e.to_string();
                    match super::words::legacy_sse_hint(url, &reason) {
                        Some(hint) => fail(format!("{reason}; {hint}")),
                        None => fail(reason),
                    }
                })?;
            Ok(Opened {
                client,
                tools,
                task_only,
                guard: None,
                process: None,
                stderr: StderrTail::default(),
                server_version,
            })
        }
    }
}

/// Spawn a stdio server and shake hands; on failure kill it and quote its stderr. Its stdout
/// goes through the line guard (an over-long answer ends its call at once).
async fn open_stdio(
    config: &ServerConfig,
    command: &str,
    mut cmd: tokio::process::Command,
    listener: Listener,
) -> Result<Opened, Failed> {
    let mut process = cmd.spawn().map_err(|e| Failed {
        reason: format!("could not start the stdio command `{command}`: {e}"),
    })?;
    let guard = GroupGuard::new(process.id());
    let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
        return Err(Failed {
            reason: format!("the stdio command `{command}` has no stdin or stdout"),
        });
    };
    let (tail, reader) = match process.stderr.take() {
        Some(stderr) => {
            let (tail, handle) = child::capture_stderr(&config.name, stderr);
            (tail, Some(handle))
        }
        None => (StderrTail::default(), None),
    };
    let task_only = line_guard::TaskOnly::default();
    let transport = (
        line_guard::guard(stdout, &config.name, task_only.clone()),
        stdin,
    );
    match handshake(transport, config.startup_timeout, listener).await {
        Ok((client, tools, server_version)) => Ok(Opened {
            client,
            tools,
            task_only,
            guard: Some(guard),
            process: Some(process),
            stderr: tail,
            server_version,
        }),
        Err(reason) => {
            let reason = match exited(&mut process).await {
                Some(status) => format!("it exited ({status}) before answering the MCP handshake"),
                None => reason.to_string(),
            };
            guard.kill();
            if let Some(reader) = reader {
                child::drain(reader).await;
            }
            Err(Failed {
                reason: format!("stdio command `{command}`: {reason}{}", tail.note(5)),
            })
        }
    }
}

/// How the server's process ended, when it has (a failed handshake is often a server that
/// quit: its exit status says more than the broken pipe the client saw).
async fn exited(process: &mut tokio::process::Child) -> Option<String> {
    let status = tokio::time::timeout(Duration::from_millis(300), process.wait())
        .await
        .ok()?
        .ok()?;
    Some(match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_owned(),
    })
}

type Handshake = (Client, Vec<rmcp::model::Tool>, Option<String>);

/// Initialize and list every tool, or say why not (including "no answer in time").
async fn handshake<T, E, A>(
    transport: T,
    deadline: Duration,
    listener: Listener,
) -> Result<Handshake, StartFailure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let started = Instant::now();
    let work = async {
        let client = listener
            .serve(transport)
            .await
            .map_err(|e| StartFailure::Handshake(error_words(&e)))?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| StartFailure::ListTools(error_words(&e)))?;
        let version = client
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|i| format!("{} {}", i.name, i.version));
        Ok((client, tools, version))
    };
    match tokio::time::timeout(deadline, work).await {
        Ok(result) => result,
        Err(_) => Err(StartFailure::NoAnswer(started.elapsed().as_millis())),
    }
}

/// How cn-run introduces itself to servers.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("cn-run", env!("CARGO_PKG_VERSION")),
    )
}

/// The job's headers as HTTP headers (values marked sensitive: they often hold tokens).
fn header_map(
    headers: &[(String, String)],
) -> Result<HashMap<HeaderName, HeaderValue>, StartFailure> {
    let mut map = HashMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| StartFailure::HeaderName(name.clone()))?;
        let mut val =
            HeaderValue::from_str(value).map_err(|_| StartFailure::HeaderValue(name.clone()))?;
        val.set_sensitive(true);
        map.insert(key, val);
    }
    Ok(map)
}
