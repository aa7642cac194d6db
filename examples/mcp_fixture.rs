//! A small MCP server for cn-run's integration tests (it is not shipped).
//!
//! `cargo test` builds examples, so the tests find it next to their own binaries at
//! `target/<profile>/examples/mcp_fixture`: take the directory of
//! `env!("CARGO_BIN_EXE_cn-run")` and append `examples/mcp_fixture`.
//!
//! Tools: `echo {text}`, `add {a, b}`, `fail {}` (an error result), `slow {ms}`,
//! `env {name}` (a variable of the server's environment), `header {name}` (a header of the
//! HTTP request that carried the call), `pid {}` and `dotted.name {}` (a name that must be
//! sanitised), `write_file {path, text}` (writes a file: not read-only), `lookup {name}`
//! (read-only, closed world), `big {bytes}` (a result of that size) and `progress {steps, ms}`
//! (a progress notification after each step), `image {mime, data, repeat, env}` (a text block
//! and an image whose base64 is `data` repeated `repeat` times, or with `env`, a PNG header
//! and the value of that variable of the server's environment), `log {count}` (that many log
//! notifications, then an answer). `echo`, `pid`, `lookup`, `big`
//! and `image` are annotated read-only.
//!
//! Modes: no argument serves MCP on stdin/stdout; `--http PORT` serves streamable HTTP on
//! 127.0.0.1:PORT (any path); `--hang` reads stdin and never answers; `--crash` writes to
//! stderr and exits with status 3; `--delay MS` waits before serving (a slow starter);
//! `--barrier DIR N` leaves a file in DIR and waits to serve until DIR holds N (servers
//! that answer only once all N have been started).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{
    CallToolResult, ContentBlock, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SlowArgs {
    /// How long to wait before answering, in milliseconds.
    ms: u64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EnvArgs {
    name: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct WriteArgs {
    path: String,
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct ProgressArgs {
    steps: u32,
    ms: u64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct ImageArgs {
    mime: String,
    /// Base64; repeated `repeat` times (default once).
    data: String,
    repeat: Option<usize>,
    /// Put this variable's value inside the picture's bytes instead.
    env: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct LogArgs {
    count: u32,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct BigArgs {
    bytes: usize,
}

#[derive(Debug, Clone)]
struct Fixture {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Fixture {
    fn new() -> Self {
        Fixture {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Return the given text.",
        annotations(read_only_hint = true)
    )]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Add two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        a.saturating_add(b).to_string()
    }

    #[tool(description = "Always return an error result.")]
    fn fail(&self) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::error(vec![ContentBlock::text(
            "the fixture failed on purpose",
        )]))
    }

    #[tool(description = "Wait, then answer.")]
    async fn slow(&self, Parameters(SlowArgs { ms }): Parameters<SlowArgs>) -> String {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("waited {ms} ms")
    }

    #[tool(description = "Read a variable of the server's environment.")]
    fn env(&self, Parameters(EnvArgs { name }): Parameters<EnvArgs>) -> String {
        std::env::var(&name).unwrap_or_else(|_| "(unset)".into())
    }

    #[tool(description = "Read a header of the HTTP request that carried this call.")]
    // rmcp's `#[tool]` hands the request context over by value.
    #[allow(clippy::needless_pass_by_value)]
    fn header(
        &self,
        Parameters(EnvArgs { name }): Parameters<EnvArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> String {
        ctx.extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.headers.get(&name))
            .map_or_else(
                || "(absent)".into(),
                |v| String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
    }

    #[tool(
        description = "Write `text` to the file `path` (relative to the server's directory; \
                       a file:// URI or ~/ as a filesystem server reads them).",
        annotations(destructive_hint = true, open_world_hint = false)
    )]
    fn write_file(
        &self,
        Parameters(WriteArgs { path, text }): Parameters<WriteArgs>,
    ) -> Result<String, ErrorData> {
        let home = std::env::var("HOME").unwrap_or_default();
        let path = match path.strip_prefix("file://") {
            Some(rest) => rest.to_owned(),
            None => match path.strip_prefix("~/") {
                Some(rest) => format!("{home}/{rest}"),
                None => path,
            },
        };
        std::fs::write(&path, text)
            .map(|()| format!("wrote {path}"))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    #[tool(
        description = "Look a word up in a fixed table (read-only, closed world).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn lookup(&self, Parameters(EnvArgs { name }): Parameters<EnvArgs>) -> String {
        format!("{name}: found")
    }

    #[tool(
        description = "Return `bytes` bytes of text in one result.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn big(&self, Parameters(BigArgs { bytes }): Parameters<BigArgs>) -> String {
        "x".repeat(bytes)
    }

    #[tool(
        description = "Return a caption and one image.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn image(
        &self,
        Parameters(ImageArgs {
            mime,
            data,
            repeat,
            env,
        }): Parameters<ImageArgs>,
    ) -> CallToolResult {
        use base64::Engine as _;
        let data = match env {
            Some(name) => {
                let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
                bytes.extend_from_slice(std::env::var(name).unwrap_or_default().as_bytes());
                bytes.extend_from_slice(b"rest of the picture");
                base64::engine::general_purpose::STANDARD.encode(bytes)
            }
            None => data.repeat(repeat.unwrap_or(1)),
        };
        CallToolResult::success(vec![
            ContentBlock::text("a picture:"),
            ContentBlock::image(data, mime),
        ])
    }

    #[tool(
        description = "Send `count` log notifications, then answer.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    #[allow(deprecated)] // logging notifications: deprecated by SEP-2577, still sent
    async fn log(
        &self,
        Parameters(LogArgs { count }): Parameters<LogArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> String {
        for i in 1..=count {
            let note = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Warning,
                serde_json::json!(format!("fixture log line {i}")),
            );
            let _ = ctx.peer.notify_logging_message(note).await;
        }
        format!("sent {count} log lines")
    }

    #[tool(description = "The trace context the call carried in `_meta` (SEP-414).")]
    // rmcp's `#[tool]` hands the request context over by value.
    #[allow(clippy::needless_pass_by_value)]
    fn trace_context(&self, ctx: RequestContext<RoleServer>) -> String {
        let or_absent = |v: Option<&str>| v.unwrap_or("(absent)").to_owned();
        format!(
            "traceparent={} tracestate={}",
            or_absent(ctx.meta.get_traceparent()),
            or_absent(ctx.meta.get_tracestate())
        )
    }

    #[tool(description = "Work in `steps` steps of `ms` ms, sending progress after each.")]
    async fn progress(
        &self,
        Parameters(ProgressArgs { steps, ms }): Parameters<ProgressArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> String {
        let token = ctx.meta.get_progress_token();
        for step in 1..=steps {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            if let Some(token) = &token {
                let note = ProgressNotificationParam::new(token.clone(), f64::from(step));
                let _ = ctx.peer.notify_progress(note).await;
            }
        }
        format!("done after {steps} steps")
    }

    #[tool(
        description = "The server's process id.",
        annotations(read_only_hint = true)
    )]
    fn pid(&self) -> String {
        std::process::id().to_string()
    }

    #[tool(name = "dotted.name", description = "A tool whose name has a dot.")]
    fn dotted(&self) -> String {
        "dotted".into()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name);
    let value = |name: &str| flag(name).and_then(|i| args.get(i + 1)).cloned();
    if let Some(ms) = value("--delay") {
        tokio::time::sleep(Duration::from_millis(ms.parse().context("--delay MS")?)).await;
    }
    if let (Some(dir), Some(n)) = (
        value("--barrier"),
        flag("--barrier").and_then(|i| args.get(i + 2)),
    ) {
        barrier(
            std::path::Path::new(&dir),
            n.parse().context("--barrier DIR N")?,
        )
        .await?;
    }
    if flag("--crash").is_some() {
        eprintln!("mcp_fixture: cannot load config: missing token");
        std::process::exit(3);
    }
    if flag("--hang").is_some() {
        eprintln!("mcp_fixture: hanging on purpose");
        let mut sink = tokio::io::sink();
        tokio::io::copy(&mut tokio::io::stdin(), &mut sink).await?;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        return Ok(());
    }
    if let Some(port) = value("--http") {
        let port: u16 = port.parse().context("--http PORT")?;
        return serve_http(port).await;
    }
    let service = Fixture::new().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// Leaves this process's file in `dir`, then waits until `dir` holds `n` files.
async fn barrier(dir: &std::path::Path, n: usize) -> anyhow::Result<()> {
    std::fs::write(dir.join(std::process::id().to_string()), b"")?;
    while std::fs::read_dir(dir)?.count() < n {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Serve streamable HTTP on 127.0.0.1:`port` until killed.
async fn serve_http(port: u16) -> anyhow::Result<()> {
    let service: StreamableHttpService<Fixture, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Fixture::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("mcp_fixture: serving http on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let handler =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(req).await) }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, handler)
                .await;
        });
    }
}
