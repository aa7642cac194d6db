//! Fetch and the services of this machine: every spelling of a local address (loopback,
//! `0.0.0.0`, the machine's own interface addresses, its host name, IPv4-mapped IPv6,
//! numeric forms) is refused when no rule named it, at the connection itself; the address
//! connected is the address the check looked up (no second lookup); and the machine's own
//! *public* address counts as local (in a network namespace the test makes, where an
//! address outside every special range is put on `lo`). Each refusal has its control: the
//! same URL with the objection lifted reaches the listener.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cn_run::tools::{Fetch, Grant, Pin, Tool, ToolContext, ToolLimits, ToolShared};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::support::runner::{cn_run, run, write_files};

/// A listener that answers `reached` and counts the connections it was sent.
struct Listener {
    port: u16,
    hits: Arc<AtomicUsize>,
}

async fn listen(addr: SocketAddr) -> Listener {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 2048];
            let _ = conn.read(&mut buf).await;
            let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached";
            let _ = conn.write_all(reply).await;
        }
    });
    Listener { port, hits }
}

fn ctx(ws: &Path, grant: Grant) -> ToolContext {
    let shared = ToolShared::new(
        ws.to_path_buf(),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        ws.join(".artifacts"),
    );
    let mut ctx = ToolContext::new(Arc::new(shared), 1, "c1");
    ctx.grant = grant;
    ctx
}

fn lifted(pin: Pin) -> Grant {
    Grant {
        pin,
        lifted: Some("tool.private_address"),
    }
}

/// This machine's interface addresses that are not loopback (IPv4).
fn own_v4() -> Vec<IpAddr> {
    nix::ifaddrs::getifaddrs()
        .unwrap()
        .filter_map(|a| a.address?.as_sockaddr_in().map(|s| IpAddr::V4(s.ip())))
        .filter(|ip| !ip.is_loopback())
        .collect()
}

#[tokio::test]
async fn every_spelling_of_a_local_address_is_refused_unless_a_rule_named_it() {
    let server = listen("0.0.0.0:0".parse().unwrap()).await;
    let p = server.port;
    let mut urls: Vec<String> = [
        "127.0.0.1",
        "127.0.0.2",
        "127.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "0.0.0.0",
        "0",
        "localhost",
        "LOCALHOST",
        "app.localhost",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
    ]
    .iter()
    .map(|h| format!("http://{h}:{p}/x"))
    .collect();
    urls.extend(own_v4().iter().map(|ip| format!("http://{ip}:{p}/x")));
    let host = nix::unistd::gethostname()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    urls.push(format!("http://{host}:{p}/x"));
    let dir = tempfile::tempdir().unwrap();
    for url in &urls {
        let args = json!({"url": url});
        let plain = ctx(dir.path(), Grant::default());
        let t = Fetch::default().tighten(&args, &plain.shared);
        let before = server.hits.load(Ordering::SeqCst);
        let refused = Fetch::default().run(args.clone(), &plain).await;
        assert!(
            refused.is_err(),
            "{url} was fetched without a rule: {refused:?}"
        );
        assert_eq!(
            server.hits.load(Ordering::SeqCst),
            before,
            "{url} reached the listener"
        );
        // A host name that does not resolve here (the machine's own name in some
        // containers) reaches nothing either way; every other spelling needs permission.
        let Some(t) = t else {
            assert!(url.contains(&host), "{url} needs no permission");
            continue;
        };
        assert_eq!(t.rule, "tool.private_address", "{url}");
        // The control: the same URL, allowed by a rule, reaches the listener.
        let judged = Fetch::default().judge(&args, &plain.shared);
        let allowed = Fetch::default()
            .run(args, &ctx(dir.path(), lifted(judged.pin)))
            .await;
        if format!("{allowed:?}").contains("did not resolve") {
            continue; // a name this machine does not resolve (`*.localhost` on some)
        }
        assert!(allowed.is_ok(), "{url}: {allowed:?}");
        assert_eq!(server.hits.load(Ordering::SeqCst), before + 1, "{url}");
    }
}

#[tokio::test]
async fn the_address_connected_is_the_address_the_check_looked_up() {
    // Two listeners on one port: 127.0.0.1 (what `localhost` resolves to now) and
    // 127.0.0.2 (what the check is made to have seen).
    let a = listen("127.0.0.1:0".parse().unwrap()).await;
    let b_addr: SocketAddr = format!("127.0.0.2:{}", a.port).parse().unwrap();
    let b = listen(b_addr).await;
    let url = format!("http://localhost:{}/x", a.port);
    let dir = tempfile::tempdir().unwrap();
    let pinned = Pin::Addrs(vec!["127.0.0.2".parse().unwrap()]);
    let out = Fetch::default()
        .run(
            json!({"url": url}),
            &ctx(dir.path(), lifted(pinned.clone())),
        )
        .await;
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(
        (a.hits.load(Ordering::SeqCst), b.hits.load(Ordering::SeqCst)),
        (0, 1)
    );
    // Without the objection lifted, nothing local is connected.
    let refused = Fetch::default()
        .run(
            json!({"url": url}),
            &ctx(
                dir.path(),
                Grant {
                    pin: pinned,
                    lifted: None,
                },
            ),
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        (a.hits.load(Ordering::SeqCst), b.hits.load(Ordering::SeqCst)),
        (0, 1)
    );
    // The control: with nothing pinned, the name is looked up now and reaches 127.0.0.1.
    let fresh = Fetch::default()
        .run(json!({"url": url}), &ctx(dir.path(), lifted(Pin::None)))
        .await;
    assert!(fresh.is_ok(), "{fresh:?}");
    assert_eq!(a.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_redirect_to_a_name_of_this_machine_is_refused_at_the_connection() {
    // The first URL is public-looking to the check (a pinned public address stands in for
    // a name that resolved publicly); its redirect names `localhost` on the listener's port.
    let server = listen("127.0.0.1:0".parse().unwrap()).await;
    let redirector = crate::support::http::MockServer::start(vec![
        crate::support::http::Reply::text(302, "text/plain", "").with_header(
            "location",
            &format!("http://app.localhost:{}/", server.port),
        ),
        crate::support::http::Reply::text(302, "text/plain", "")
            .with_header("location", &format!("http://127.0.0.1:{}/", server.port)),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = Fetch::default()
            .run(
                json!({"url": format!("{}/start", redirector.url())}),
                &ctx(dir.path(), lifted(Pin::None)),
            )
            .await;
        assert!(out.is_err(), "{out:?}");
    }
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
}

const LISTENER: &str = r#"
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("11.22.33.44", 8080))
s.listen(8)
open("ready", "w").close()
s.settimeout(120)
while True:
    c, _ = s.accept()
    c.recv(4096)
    open("reached", "a").write("x")
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached")
    c.close()
"#;

/// Runs the job in `dir` inside a new network namespace whose `lo` also carries
/// 11.22.33.44 (outside every special range: the shape of a runner's public address; it
/// exists only inside this namespace), with a listener on it. `None` where the test cannot
/// make the namespace.
fn run_with_own_public_address(dir: &Path) -> Option<crate::support::runner::Run> {
    std::fs::write(dir.join("listener.py"), LISTENER).unwrap();
    let script = "ip link set lo up && ip addr add 11.22.33.44/32 dev lo || exit 97\n\
                  python3 listener.py & L=$!\n\
                  i=0; while [ ! -e ready ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n\
                  \"$0\" job.yaml --out out; c=$?; kill $L; exit $c";
    let cmd = cn_run(dir);
    let program = cmd.get_program().to_owned();
    let mut wrapped = std::process::Command::new("unshare");
    wrapped
        .args(["-n", "--", "sh", "-c", script])
        .arg(program)
        .current_dir(dir)
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let r = run(wrapped, None);
    (r.code != 97 && !r.stderr.contains("unshare failed")).then_some(r)
}

fn job(dir: &Path, allow: &str) {
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Fetch", "arguments": {"url": "http://11.22.33.44:8080/admin"}}]},
        {"text": "done"}
    ]})
    .to_string();
    let job = format!(
        "version: 1\nname: own-address\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\n{allow}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.json", &script)]);
}

#[test]
fn the_machines_own_public_address_is_local() {
    let denied = tempfile::tempdir().unwrap();
    job(denied.path(), "");
    let Some(r) = run_with_own_public_address(denied.path()) else {
        eprintln!("skipped: cannot make a network namespace here");
        return;
    };
    assert!(denied.path().join("ready").exists(), "{r:#?}");
    assert!(
        !denied.path().join("reached").exists(),
        "the listener was reached: {r:#?}"
    );
    let result = std::fs::read_to_string(denied.path().join("out/result.json")).unwrap();
    assert!(result.contains("tool.private_address"), "{result}");
    assert!(result.contains("address of this machine"), "{result}");
    // The control: a rule that names the address lets the same fetch through.
    let allowed = tempfile::tempdir().unwrap();
    job(
        allowed.path(),
        "permissions: {allow: ['Fetch(http://11.22.33.44:8080/*)']}\n",
    );
    let r = run_with_own_public_address(allowed.path()).unwrap();
    assert!(allowed.path().join("reached").exists(), "{r:#?}");
}
