//! The Fetch tool against a local HTTP server: HTML to markdown, redirect loops and chains,
//! output and download caps, stalled and slow bodies, and the private-address rule for the
//! first URL (a permission tightening) and for redirects (refused by the tool).

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cn_run::tools::{
    Fetch, FetchLimits, Grant, Pin, Tool, ToolContext, ToolError, ToolLimits, ToolOutput,
    ToolShared, check_redirect,
};
use reqwest::Url;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::http::{Chunk, MockServer, Reply};

/// A call's context as the dispatcher makes it for a fetch a rule allowed although its
/// address is local (these tests' servers listen on 127.0.0.1): Fetch's objection lifted.
fn ctx(ws: &Path) -> ToolContext {
    let mut ctx = unlifted(ws);
    ctx.grant = Grant {
        pin: Pin::None,
        lifted: Some("tool.private_address"),
    };
    ctx
}

/// A call's context with nothing lifted (a fetch no rule named).
fn unlifted(ws: &Path) -> ToolContext {
    let shared = ToolShared::new(
        ws.to_path_buf(),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        ws.join(".artifacts"),
    );
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "call-1".into(),
        grant: Grant::default(),
    }
}

async fn fetch(tool: &Fetch, url: &str) -> Result<ToolOutput, ToolError> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    tool.run(json!({"url": url}), &ctx(dir.path())).await
}

fn model_error(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::RespondToModel(msg)) => msg,
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

fn redirect(to: &str) -> Reply {
    Reply::text(302, "text/plain", "").with_header("location", to)
}

#[tokio::test]
async fn an_html_page_becomes_markdown() {
    let html = "<!doctype html><html><head><title>T</title><style>body{color:red}</style></head>\
                <body><h1>Release notes</h1><p>See <a href=\"/docs\">the docs</a>.</p>\
                <ul><li>first</li><li>second</li></ul><script>track()</script></body></html>";
    let server = MockServer::start(vec![Reply::text(200, "text/html; charset=utf-8", html)]).await;
    let out = fetch(&Fetch::default(), &format!("{}/page", server.url()))
        .await
        .unwrap()
        .content;
    assert!(out.contains("# Release notes"), "{out}");
    assert!(out.contains("[the docs](/docs)"), "{out}");
    assert!(out.contains("first") && out.contains("second"), "{out}");
    for gone in ["<li>", "color:red", "track()", "<h1>"] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
}

#[tokio::test]
async fn a_redirect_loop_is_stopped() {
    let server = MockServer::start(vec![redirect("/b"), redirect("/a"), redirect("/b")]).await;
    let msg = model_error(fetch(&Fetch::default(), &format!("{}/a", server.url())).await);
    assert!(msg.contains("Redirect loop"), "{msg}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let replies = vec![
        redirect("/two"),
        redirect("/three"),
        Reply::text(200, "text/plain", "arrived"),
    ];
    let server = MockServer::start(replies).await;
    let out = fetch(&Fetch::default(), &format!("{}/one", server.url()))
        .await
        .unwrap()
        .content;
    assert!(
        out.contains("arrived") && out.contains("redirected to"),
        "{out}"
    );

    let chain: Vec<Reply> = (0..6).map(|i| redirect(&format!("/hop{i}"))).collect();
    let server = MockServer::start(chain).await;
    let tool = Fetch::with_limits(FetchLimits {
        max_redirects: 3,
        ..FetchLimits::default()
    });
    let msg = model_error(fetch(&tool, &format!("{}/start", server.url())).await);
    assert!(msg.contains("Too many redirects"), "{msg}");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn long_output_is_cut_at_20000_characters_with_a_note() {
    let body = "é".repeat(50_000);
    let server = MockServer::start(vec![Reply::text(200, "text/plain; charset=utf-8", body)]).await;
    let out = fetch(&Fetch::default(), &server.url())
        .await
        .unwrap()
        .content;
    assert_eq!(out.chars().filter(|c| *c == 'é').count(), 20_000);
    assert!(
        out.ends_with("(30000 characters of fetched content truncated)"),
        "{}",
        &out[out.len() - 80..]
    );

    let server = MockServer::start(vec![Reply::text(200, "text/plain", "x".repeat(5_000))]).await;
    let tool = Fetch::with_limits(FetchLimits {
        max_bytes: 1_000,
        ..FetchLimits::default()
    });
    let out = fetch(&tool, &server.url()).await.unwrap().content;
    assert_eq!(out.matches('x').count(), 1_000);
    assert!(out.contains("download stopped after 1000 bytes"), "{out}");
}

#[tokio::test]
async fn a_stalled_or_slow_body_times_out() {
    let limits = FetchLimits {
        stall_timeout: Duration::from_millis(300),
        total_timeout: Duration::from_secs(1),
        ..FetchLimits::default()
    };
    let tool = Fetch::with_limits(limits);
    let server = MockServer::start(vec![
        Reply::text(200, "text/plain", "a".repeat(100)).stall_after(10),
    ])
    .await;
    let start = Instant::now();
    let msg = model_error(fetch(&tool, &server.url()).await);
    assert!(msg.contains("stalled"), "{msg}");
    // The body stalls for ever: only the 300 ms stall limit ends the wait.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );

    // Data keeps coming, but the whole fetch takes longer than the total budget.
    // (60 s of ticks: only the 1 s budget can end it well before.)
    let chunks: Vec<Chunk> = (0..400).map(|_| Chunk::after(150, "tick\n")).collect();
    let server = MockServer::start(vec![Reply::sse(200, chunks)]).await;
    let start = Instant::now();
    let msg = model_error(fetch(&tool, &server.url()).await);
    assert!(msg.contains("took longer than 1 s"), "{msg}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn error_statuses_and_binary_bodies_are_reported() {
    let server = MockServer::start(vec![
        Reply::text(404, "text/plain", "no such page"),
        Reply::text(200, "image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 1, 2]),
    ])
    .await;
    let msg = model_error(fetch(&Fetch::default(), &server.url()).await);
    assert!(msg.contains("404") && msg.contains("no such page"), "{msg}");
    let msg = model_error(fetch(&Fetch::default(), &server.url()).await);
    assert!(msg.contains("binary") && msg.contains("image/png"), "{msg}");
    let msg = model_error(fetch(&Fetch::default(), "file:///etc/passwd").await);
    assert!(msg.contains("http"), "{msg}");
}

#[tokio::test]
async fn a_redirect_to_another_private_host_is_refused() {
    // The fetch is to 127.0.0.1 (allowed by a rule, say); a redirect to `localhost` is a
    // different private host, so it is not followed.
    let server = MockServer::start(vec![redirect("http://localhost:9/admin")]).await;
    let msg = model_error(fetch(&Fetch::default(), &format!("{}/start", server.url())).await);
    assert!(msg.contains("not a public address"), "{msg}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn redirects_from_public_to_private_addresses_are_refused() {
    let url = |s: &str| Url::parse(s).unwrap();
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    let public = url("https://example.com/start");
    for private in [
        "http://127.0.0.1/admin",
        "http://10.0.0.5/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
    ] {
        let err = check_redirect(&public, &url(private), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a public address"), "{private}: {err}");
    }
    // A public name that resolves to a private address is refused too.
    assert!(
        check_redirect(
            &public,
            &url("https://intranet.example.com/"),
            &[ip("10.1.2.3")]
        )
        .is_err()
    );
    assert!(
        check_redirect(
            &public,
            &url("https://cdn.example.net/x"),
            &[ip("93.184.216.34")]
        )
        .is_ok()
    );
    assert!(check_redirect(&public, &url("ftp://example.com/file"), &[]).is_err());
    // A fetch that was to the private host already may be redirected within it.
    let local = url("http://127.0.0.1:8080/a");
    assert!(check_redirect(&local, &url("http://127.0.0.1:8080/b"), &[]).is_ok());
    assert!(check_redirect(&local, &url("http://127.0.0.1:9090/b"), &[]).is_err());
}

#[test]
fn private_urls_need_permission() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    for u in [
        "http://127.0.0.1:8080/",
        "http://localhost/x",
        "http://169.254.169.254/",
        "http://[::1]/",
    ] {
        let t = Fetch::default()
            .tighten(&json!({"url": u}), &ctx.shared)
            .unwrap_or_else(|| panic!("{u}"));
        assert_eq!(t.rule, "tool.private_address", "{u}");
        assert_eq!(t.permission, cn_run::permissions::Permission::Ask);
    }
    assert_eq!(
        Fetch::default().tighten(&json!({"url": "https://93.184.216.34/"}), &ctx.shared),
        None
    );
}
