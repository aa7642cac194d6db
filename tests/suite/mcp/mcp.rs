//! MCP servers against a real server: the `mcp_fixture` example (built by `cargo test`),
//! over stdio and streamable HTTP. Tools are listed under `mcp__<server>__`, calls return
//! results or errors the model can read, a server that never answers fails the start in time,
//! and no server process outlives the hub.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cn_run::mcp::{McpError, McpHub, ServerConfig, ServerState, Transport, TransportKind};
use cn_run::permissions::{Mode, Permission, Policy, PolicyInput, RuleSpec};
use cn_run::tools::{Tool, ToolContext, ToolError, ToolLimits, ToolShared};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::ports::Port;

/// `target/<profile>/examples/mcp_fixture`, next to the cn-run binary's directory.
fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    let path = bin
        .parent()
        .map(|d| d.join("examples/mcp_fixture"))
        .unwrap_or_default();
    assert!(
        path.is_file(),
        "{} is missing: `cargo test` builds examples",
        path.display()
    );
    path
}

/// The scrubbed environment a run passes to servers: PATH only.
fn base_env() -> Vec<(String, String)> {
    vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())]
}

fn stdio(name: &str, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: fixture().to_string_lossy().into_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: vec![],
            cwd: std::env::temp_dir(),
        },
        optional: false,
        startup_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(20),
    }
}

fn ctx_with(cancel: CancellationToken) -> ToolContext {
    let dir = std::env::temp_dir();
    let shared = ToolShared::new(
        dir.clone(),
        vec![],
        cancel,
        ToolLimits::default(),
        dir.join("cn-run-mcp-artifacts"),
    );
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "c1".into(),
        grant: cn_run::tools::Grant::default(),
    }
}

fn ctx() -> ToolContext {
    ctx_with(CancellationToken::new())
}

fn tool(hub: &McpHub, name: &str) -> Arc<dyn Tool> {
    hub.tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} in {hub:?}"))
}

async fn call(hub: &McpHub, name: &str, args: serde_json::Value) -> Result<String, ToolError> {
    tool(hub, name).run(args, &ctx()).await.map(|o| o.content)
}

/// Whether `pid` is a running process (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                != Some('Z')
        }
    }
}

/// Running processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
                && alive(*pid)
        })
        .collect()
}

/// Wait up to `within` for `check` to become true.
async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    check()
}

fn marker() -> String {
    format!("--marker={}", uuid::Uuid::new_v4())
}

#[tokio::test]
async fn stdio_tools_are_listed_prefixed_and_answer() {
    let (hub, statuses) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    assert_eq!(statuses.len(), 1);
    let s = &statuses[0];
    assert_eq!(
        (s.name.as_str(), s.transport, s.status),
        ("fx", TransportKind::Stdio, ServerState::Ready)
    );
    assert_eq!(s.tools, hub.tools().len());
    let names: Vec<String> = hub.tools().iter().map(|t| t.name().to_owned()).collect();
    for expected in [
        "mcp__fx__echo",
        "mcp__fx__add",
        "mcp__fx__fail",
        "mcp__fx__slow",
        "mcp__fx__dotted_name",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} not in {names:?}"
        );
    }
    let spec = tool(&hub, "mcp__fx__echo").spec();
    assert_eq!(spec.parameters["type"], "object");
    assert_eq!(spec.parameters["required"], json!(["text"]));
    assert_eq!(spec.description, "Return the given text.");
    assert!(
        spec.parameters.get("$schema").is_none(),
        "{}",
        spec.parameters
    );
    assert_eq!(
        tool(&hub, "mcp__fx__dotted_name").spec().parameters["type"],
        "object"
    );

    assert_eq!(
        call(&hub, "mcp__fx__echo", json!({"text": "héllo"}))
            .await
            .unwrap(),
        "héllo"
    );
    assert_eq!(
        call(&hub, "mcp__fx__add", json!({"a": 2, "b": 40}))
            .await
            .unwrap(),
        "42"
    );
    // The sanitised name still reaches the tool by its real name.
    assert_eq!(
        call(&hub, "mcp__fx__dotted_name", json!({})).await.unwrap(),
        "dotted"
    );
    // Read-only tools (by their annotation) need no checkpoint; the rest may change files.
    assert!(!tool(&hub, "mcp__fx__echo").is_mutating());
    assert!(tool(&hub, "mcp__fx__add").is_mutating());
    hub.shutdown().await;
}

#[tokio::test]
async fn error_results_and_bad_arguments_go_back_to_the_model() {
    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    match call(&hub, "mcp__fx__fail", json!({})).await {
        Err(ToolError::RespondToModel(m)) => assert!(m.contains("failed on purpose"), "{m}"),
        other => panic!("expected an error for the model, got {other:?}"),
    }
    match call(&hub, "mcp__fx__add", json!({"a": "two", "b": 1})).await {
        Err(ToolError::RespondToModel(m)) => assert!(m.contains("fx"), "{m}"),
        other => panic!("expected an error for the model, got {other:?}"),
    }
    match call(&hub, "mcp__fx__echo", json!(["not", "an", "object"])).await {
        Err(ToolError::RespondToModel(m)) => assert!(m.contains("JSON object"), "{m}"),
        other => panic!("expected an error for the model, got {other:?}"),
    }
    // The server is still there after all that.
    assert_eq!(
        call(&hub, "mcp__fx__echo", json!({"text": "ok"}))
            .await
            .unwrap(),
        "ok"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_slow_call_times_out_and_the_server_keeps_working() {
    let mut config = stdio("fx", &[]);
    config.call_timeout = Duration::from_millis(300);
    let (hub, _) = McpHub::start(vec![config], &base_env()).await.unwrap();
    // The call would take two minutes: ending well before that is the timeout's doing, at
    // any load (a bound on speed would fail on a busy machine, not on a broken timeout).
    let start = Instant::now();
    let err = call(&hub, "mcp__fx__slow", json!({"ms": 120_000}))
        .await
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    assert!(
        matches!(&err, ToolError::RespondToModel(m) if m.contains("did not answer") && m.contains("fx")),
        "{err:?}"
    );
    assert_eq!(
        call(&hub, "mcp__fx__slow", json!({"ms": 10}))
            .await
            .unwrap(),
        "waited 10 ms"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn cancelling_the_run_stops_a_call() {
    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let ctx = ctx_with(cancel.clone());
    let slow = tool(&hub, "mcp__fx__slow");
    let start = Instant::now();
    // A two-minute call: ending well before that is the cancellation's doing, at any load.
    let (result, ()) = tokio::join!(slow.run(json!({"ms": 120_000}), &ctx), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    assert!(start.elapsed() < Duration::from_secs(60));
    assert!(matches!(result, Err(ToolError::RespondToModel(m)) if m.contains("run is ending")));
    hub.shutdown().await;
}

#[tokio::test]
async fn a_stdio_server_sees_only_the_base_env_and_its_own() {
    let leaked = std::env::vars()
        .map(|(k, _)| k)
        .find(|k| k != "PATH")
        .expect("the test process has some variable besides PATH");
    let mut config = stdio("fx", &[]);
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.push(("FX_TOKEN".into(), "from-the-job".into()));
    }
    let (hub, _) = McpHub::start(vec![config], &base_env()).await.unwrap();
    assert_eq!(
        call(&hub, "mcp__fx__env", json!({"name": "FX_TOKEN"}))
            .await
            .unwrap(),
        "from-the-job"
    );
    assert_eq!(
        call(&hub, "mcp__fx__env", json!({"name": leaked}))
            .await
            .unwrap(),
        "(unset)"
    );
    assert_eq!(
        call(&hub, "mcp__fx__env", json!({"name": "PATH"}))
            .await
            .unwrap(),
        std::env::var("PATH").unwrap()
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn shutdown_and_drop_both_end_the_server_process() {
    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    let pid: u32 = call(&hub, "mcp__fx__pid", json!({}))
        .await
        .unwrap()
        .parse()
        .unwrap();
    assert!(alive(pid));
    hub.shutdown().await;
    assert!(
        eventually(Duration::from_secs(30), || !alive(pid)).await,
        "server {pid} outlived shutdown"
    );

    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    let pid: u32 = call(&hub, "mcp__fx__pid", json!({}))
        .await
        .unwrap()
        .parse()
        .unwrap();
    drop(hub);
    assert!(
        eventually(Duration::from_secs(30), || !alive(pid)).await,
        "server {pid} outlived its hub"
    );
}

#[tokio::test]
async fn a_server_that_dies_mid_run_gives_the_model_a_clear_error() {
    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    let pid: u32 = call(&hub, "mcp__fx__pid", json!({}))
        .await
        .unwrap()
        .parse()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let start = Instant::now();
    let err = call(&hub, "mcp__fx__echo", json!({"text": "anyone?"}))
        .await
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(
        matches!(&err, ToolError::RespondToModel(m) if m.contains("\"fx\"") && m.contains("no longer be reached")),
        "{err:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_fails_the_start_in_time() {
    let mark = marker();
    let mut config = stdio("stuck", &["--hang", &mark]);
    config.startup_timeout = Duration::from_millis(800);
    let start = Instant::now();
    let err = McpHub::start(vec![config], &base_env()).await.unwrap_err();
    let took = start.elapsed();
    eprintln!("hang failure after {took:?}: {err}");
    // The server never answers: only the 800 ms start-up limit ends the wait.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let McpError::Startup { server, reason } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(server, "stuck");
    assert!(reason.contains("within"), "{reason}");
    assert!(
        reason.contains("hanging on purpose"),
        "stderr not quoted: {reason}"
    );
    assert!(
        err.to_string()
            .starts_with("MCP server \"stuck\" failed to start"),
        "{err}"
    );
    assert!(
        eventually(Duration::from_secs(3), || processes_with(&mark).is_empty()).await,
        "hung server left running"
    );
}

#[tokio::test]
async fn a_crashing_server_is_named_with_its_last_words() {
    let err = McpHub::start(vec![stdio("broken", &["--crash"])], &base_env())
        .await
        .unwrap_err();
    let text = err.to_string();
    eprintln!("crash failure: {text}");
    assert!(text.contains("\"broken\""), "{text}");
    assert!(text.contains("missing token"), "{text}");
    let missing = ServerConfig {
        transport: Transport::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: vec![],
            cwd: std::env::temp_dir(),
        },
        ..stdio("ghost", &[])
    };
    let text = McpHub::start(vec![missing], &base_env())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("\"ghost\"") && text.contains("/nonexistent/mcp-server"),
        "{text}"
    );
}

#[tokio::test]
async fn an_optional_server_that_fails_is_reported_and_skipped() {
    let mut stuck = stdio("stuck", &["--hang"]);
    stuck.optional = true;
    stuck.startup_timeout = Duration::from_millis(500);
    let (hub, statuses) = McpHub::start(vec![stdio("fx", &[]), stuck], &base_env())
        .await
        .unwrap();
    assert_eq!(statuses.len(), 2);
    assert_eq!(
        (statuses[0].name.as_str(), statuses[0].status),
        ("fx", ServerState::Ready)
    );
    let failed = &statuses[1];
    assert_eq!(
        (failed.name.as_str(), failed.status, failed.tools),
        ("stuck", ServerState::Failed, 0)
    );
    assert!(
        failed.message.as_deref().unwrap_or("").contains("within"),
        "{failed:?}"
    );
    assert!(
        hub.tools()
            .iter()
            .all(|t| t.name().starts_with("mcp__fx__"))
    );
    let event = serde_json::to_value(failed.to_event()).unwrap();
    assert_eq!(
        (event["type"].as_str(), event["status"].as_str()),
        (Some("mcp.server"), Some("failed"))
    );
    let status = serde_json::to_value(failed).unwrap();
    assert_eq!(
        (status["transport"].as_str(), status["status"].as_str()),
        (Some("stdio"), Some("failed"))
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_required_failure_stops_the_servers_that_did_start() {
    let mark = marker();
    let mut stuck = stdio("stuck", &["--hang"]);
    stuck.startup_timeout = Duration::from_millis(700);
    let err = McpHub::start(vec![stdio("fx", &[&mark]), stuck], &base_env())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, McpError::Startup { server, .. } if server == "stuck"),
        "{err:?}"
    );
    assert!(
        eventually(Duration::from_secs(4), || processes_with(&mark).is_empty()).await,
        "fx left running"
    );
}

#[tokio::test]
async fn duplicate_server_names_are_refused() {
    let err = McpHub::start(vec![stdio("fx", &[]), stdio("fx", &[])], &base_env())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Config { .. }), "{err:?}");
}

#[tokio::test]
async fn permission_patterns_match_the_exposed_names() {
    let (hub, _) = McpHub::start(vec![stdio("fx", &[])], &base_env())
        .await
        .unwrap();
    let input = PolicyInput {
        mode: Mode::Headless,
        job: vec![
            RuleSpec::new("mcp__fx__add", Permission::Exclude),
            RuleSpec::new("mcp__fx__*", Permission::Allow),
        ],
        ..PolicyInput::default()
    };
    let policy = Policy::build(input, &std::env::temp_dir()).unwrap();
    let shared = ctx().shared;
    let decide = |name: &str, args: serde_json::Value| {
        let t = tool(&hub, name);
        policy
            .check(t.name(), &args, t.tighten(&args, &shared))
            .permission
    };
    assert_eq!(
        decide("mcp__fx__add", json!({"a": 1, "b": 2})),
        Permission::Exclude
    );
    assert_eq!(
        decide("mcp__fx__echo", json!({"text": "x"})),
        Permission::Allow
    );
    assert!(!policy.is_offered("mcp__fx__add"));
    hub.shutdown().await;
}

/// The HTTP fixture on a reserved port (held until the test ends, so no other process
/// takes it between here and the fixture's bind).
async fn http_fixture() -> anyhow::Result<(tokio::process::Child, String, Port)> {
    let port = Port::reserve();
    let child = tokio::process::Command::new(fixture())
        .args(["--http", &port.port().to_string()])
        .kill_on_drop(true)
        .spawn()?;
    let up = eventually(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port.port())).is_ok()
    })
    .await;
    assert!(up, "the HTTP fixture did not listen on {}", port.port());
    let url = port.url("/mcp");
    Ok((child, url, port))
}

fn http(name: &str, url: &str, headers: &[(&str, &str)]) -> ServerConfig {
    ServerConfig {
        transport: Transport::Http {
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        },
        ..stdio(name, &[])
    }
}

#[tokio::test]
async fn streamable_http_servers_work_with_their_headers() {
    let (mut server, url, _port) = http_fixture().await.unwrap();
    let config = http(
        "web",
        &url,
        &[
            ("X-Fixture-Token", "s3cret"),
            ("Authorization", "Bearer abc"),
        ],
    );
    let (hub, statuses) = McpHub::start(vec![config], &base_env()).await.unwrap();
    assert_eq!(
        (statuses[0].transport, statuses[0].status),
        (TransportKind::Http, ServerState::Ready)
    );
    assert_eq!(
        call(&hub, "mcp__web__echo", json!({"text": "over http"}))
            .await
            .unwrap(),
        "over http"
    );
    assert_eq!(
        call(&hub, "mcp__web__add", json!({"a": -1, "b": 1}))
            .await
            .unwrap(),
        "0"
    );
    assert_eq!(
        call(&hub, "mcp__web__header", json!({"name": "x-fixture-token"}))
            .await
            .unwrap(),
        "s3cret"
    );
    assert_eq!(
        call(&hub, "mcp__web__header", json!({"name": "authorization"}))
            .await
            .unwrap(),
        "Bearer abc"
    );
    assert!(call(&hub, "mcp__web__fail", json!({})).await.is_err());
    hub.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn an_unreachable_http_server_is_retried_until_its_startup_timeout_then_named() {
    // Held, never listened on: every connection is refused.
    let port = Port::reserve();
    let url = port.url("/mcp");
    let config = ServerConfig {
        startup_timeout: Duration::from_secs(2),
        ..http("remote", &url, &[])
    };
    let err = McpHub::start(vec![config], &base_env()).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"remote\"") && text.contains(&url), "{text}");
    assert!(text.contains("streamable HTTP"), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    let tries: u32 = text
        .split("tried ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(tries > 1, "not retried: {text}");
    assert!(!text.contains("::"), "a Rust type name in: {text}");
}

#[tokio::test]
async fn an_http_server_that_starts_late_is_waited_for() {
    for delay in ["300", "800", "1500", "0", "100"] {
        let port = Port::reserve();
        let url = port.url("/mcp");
        let mut server = tokio::process::Command::new(fixture())
            .args(["--delay", delay, "--http", &port.port().to_string()])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (hub, statuses) = McpHub::start(vec![http("late", &url, &[])], &base_env())
            .await
            .unwrap_or_else(|e| panic!("delay {delay}: {e}"));
        assert_eq!(statuses[0].status, ServerState::Ready);
        assert_eq!(
            call(&hub, "mcp__late__echo", json!({"text": "late"}))
                .await
                .unwrap(),
            "late"
        );
        hub.shutdown().await;
        server.kill().await.unwrap();
    }
}

/// Three fixture servers that each answer only once all three have been started (a
/// barrier of files): started one after another, the first would wait for the others
/// forever and the start would fail at its startup timeout. Started together, all three
/// are ready. No clock decides the verdict (the timeout only bounds a failure).
#[tokio::test]
async fn three_servers_start_together_not_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    let barrier = dir.path().to_string_lossy().into_owned();
    let configs = (0..3)
        .map(|i| stdio(&format!("s{i}"), &["--barrier", &barrier, "3"]))
        .collect();
    let (hub, statuses) = McpHub::start(configs, &base_env())
        .await
        .unwrap_or_else(|e| panic!("not started together: {e}"));
    assert_eq!(statuses.len(), 3);
    assert!(statuses.iter().all(|s| s.status == ServerState::Ready));
    hub.shutdown().await;
}

/// The control of the test above: one of those servers started alone never gets past its
/// barrier, so servers started one at a time would fail the start.
#[tokio::test]
async fn a_barrier_server_started_alone_never_answers() {
    let dir = tempfile::tempdir().unwrap();
    let barrier = dir.path().to_string_lossy().into_owned();
    let config = ServerConfig {
        startup_timeout: Duration::from_secs(2),
        ..stdio("s0", &["--barrier", &barrier, "3"])
    };
    let err = McpHub::start(vec![config], &base_env())
        .await
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_else(|| panic!("the lone barrier server answered"));
    assert!(err.contains("\"s0\""), "{err}");
}

#[test]
fn starting_is_a_send_future() {
    fn assert_send<T: Send>(_: &T) {}
    let env = base_env();
    let fut = McpHub::start(vec![], &env);
    assert_send(&fut);
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<McpHub>();
    assert_send_sync::<cn_run::mcp::McpTool>();
}

#[tokio::test]
async fn an_answer_over_the_stdio_line_limit_ends_its_call_at_once_and_the_server_goes_on() {
    let mut config = stdio("fx", &[]);
    config.call_timeout = Duration::from_secs(120);
    let (hub, _) = McpHub::start(vec![config], &base_env()).await.unwrap();
    const MIB: u64 = 1024 * 1024;
    for (bytes, fits) in [
        (15 * MIB, true),
        (16 * MIB - 4096, true),
        (16 * MIB + 10, false),
        (20 * MIB, false),
        (40 * MIB, false),
    ] {
        let result = call(&hub, "mcp__fx__big", json!({ "bytes": bytes })).await;
        match (fits, result) {
            (true, Ok(text)) => assert!(text.starts_with("xxxx"), "{bytes}"),
            (false, Err(ToolError::RespondToModel(m))) => {
                assert!(
                    m.contains("too large") && m.contains("16 MiB"),
                    "{bytes}: {m}"
                );
                assert!(m.contains("\"fx\"") && m.contains("`big`"), "{m}");
            }
            (_, other) => panic!("{bytes} bytes: {other:?}"),
        }
        assert_eq!(
            call(&hub, "mcp__fx__echo", json!({"text": "still here"}))
                .await
                .unwrap(),
            "still here"
        );
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn progress_keeps_a_long_call_alive_and_silence_still_ends_it() {
    let mut config = stdio("fx", &[]);
    config.call_timeout = Duration::from_secs(2);
    let (hub, _) = McpHub::start(vec![config], &base_env()).await.unwrap();
    // Each case runs longer than call_timeout in all; only the silent one has a gap that long.
    for (steps, ms) in [(10, 300), (6, 500), (30, 100), (5, 700)] {
        let out = call(&hub, "mcp__fx__progress", json!({"steps": steps, "ms": ms}))
            .await
            .unwrap_or_else(|e| panic!("{steps} x {ms} ms: {e:?}"));
        assert_eq!(out, format!("done after {steps} steps"));
    }
    let silent = call(&hub, "mcp__fx__slow", json!({"ms": 10_000})).await;
    assert!(
        matches!(&silent, Err(ToolError::RespondToModel(m)) if m.contains("did not answer")),
        "{silent:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn an_answer_over_the_http_size_limit_says_too_large_and_the_server_goes_on() {
    let (mut server, url, _port) = http_fixture().await.unwrap();
    let mut config = http("web", &url, &[]);
    config.call_timeout = Duration::from_secs(120);
    let (hub, _) = McpHub::start(vec![config], &base_env()).await.unwrap();
    const MIB: u64 = 1024 * 1024;
    for (bytes, fits) in [
        (15 * MIB, true),
        (16 * MIB - 4096, true),
        (16 * MIB + 10, false),
        (20 * MIB, false),
        (40 * MIB, false),
    ] {
        let result = call(&hub, "mcp__web__big", json!({ "bytes": bytes })).await;
        match (fits, result) {
            (true, Ok(text)) => assert!(text.starts_with("xxxx"), "{bytes}"),
            (false, Err(ToolError::RespondToModel(m))) => {
                assert!(
                    m.contains("too large") && m.contains("16 MiB"),
                    "{bytes}: {m}"
                );
                assert!(m.contains("\"web\"") && m.contains("`big`"), "{m}");
                assert!(!m.contains("no longer be reached"), "{m}");
            }
            (_, other) => panic!("{bytes} bytes: {other:?}"),
        }
        assert_eq!(
            call(&hub, "mcp__web__echo", json!({"text": "still here"}))
                .await
                .unwrap(),
            "still here"
        );
    }
    hub.shutdown().await;
    let _ = server.kill().await;
}

/// A stdio server that quits before the handshake is named with how it ended (exit code or
/// signal) and its stderr, not with the broken pipe the client saw.
#[tokio::test]
async fn a_server_that_quits_before_the_handshake_says_how_it_ended() {
    let cases = [
        (
            "echo 'config missing' >&2; exit 3",
            "exit code 3",
            Some("config missing"),
        ),
        ("exit 0", "exit code 0", None),
        (
            "echo 'usage: srv [opts]' >&2; exit 64",
            "exit code 64",
            Some("usage: srv"),
        ),
        ("kill -9 $$", "killed by a signal", None),
        ("echo not-json; exit 1", "exit code 1", None),
    ];
    for (script, ended, stderr) in cases {
        let config = ServerConfig {
            transport: Transport::Stdio {
                command: "sh".into(),
                args: vec!["-c".into(), script.into()],
                env: vec![],
                cwd: std::env::temp_dir(),
            },
            ..stdio("quits", &[])
        };
        let err = McpHub::start(vec![config], &base_env()).await.unwrap_err();
        let McpError::Startup { server, reason } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(server, "quits");
        assert!(reason.contains("stdio command `sh`"), "{script}: {reason}");
        assert!(reason.contains(ended), "{script}: {reason}");
        assert!(
            !reason.contains("os error") && !reason.contains("::"),
            "{script}: {reason}"
        );
        if let Some(line) = stderr {
            assert!(
                reason.contains(line),
                "{script}: stderr not quoted: {reason}"
            );
        }
    }
}
