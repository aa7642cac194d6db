//! `tools.bash.network: [hosts]` (issue 16), shown by effects: two listeners on the host's
//! loopback stand in for a listed and an unlisted host. Under the default policy a scripted
//! model reaches the listed one through cn-run's proxy (plain HTTP, a CONNECT tunnel, a
//! different spelling of the same name), and reaches nothing it must not: the IP literal of
//! a listed name, another port, uppercase and trailing-dot spellings, a name resolving to
//! a listed IP, a raw CONNECT to the proxy, and connections that ignore the proxy
//! variables. Each refusal is explained in the command's result.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::containment_scene::{Scene, bash, namespaces_available};

/// A loopback listener that records the request line of every connection and answers 200.
struct Listener {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(3)));
                let mut buf = [0u8; 2048];
                let n = conn.read(&mut buf).unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..n]);
                log.lock()
                    .unwrap()
                    .push(text.lines().next().unwrap_or("").to_owned());
                let body = format!("reached {port}\n");
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Listener { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Whether the run's shared network namespace (and so the proxy) can be made here.
fn proxy_possible() -> bool {
    let ok = namespaces_available() && rustix::process::geteuid().is_root();
    if !ok {
        eprintln!("SKIPPED: the host allow-list needs bubblewrap and root (CAP_SYS_ADMIN)");
    }
    ok
}

/// Through the proxy: `curl` with the loopback exemption of `NO_PROXY` lifted.
fn via_proxy(flags: &str, url: &str) -> String {
    format!("unset NO_PROXY no_proxy; curl -sS -m 5 {flags} '{url}'")
}

/// The job lines for `hosts`.
fn job(hosts: &[String]) -> String {
    format!(
        "tools: {{bash: {{network: {}}}}}\n",
        serde_json::to_string(hosts).unwrap()
    )
}

#[test]
fn only_listed_names_are_reached_and_every_other_spelling_is_refused() {
    if !proxy_possible() {
        return;
    }
    let (a, b) = (Listener::start(), Listener::start());
    let (pa, pb) = (a.port, b.port);
    let s = Scene::new();
    let reached = [
        bash(&via_proxy("", &format!("http://localhost:{pa}/ok-plain"))),
        bash(&via_proxy(
            "-p",
            &format!("http://localhost:{pa}/ok-tunnel"),
        )),
        bash(&format!(
            "unset NO_PROXY no_proxy; python3 -c 'import urllib.request as u; \
             print(u.urlopen(\"http://LOCALHOST.:{pa}/ok-spelled\", timeout=5).read())'"
        )),
    ];
    let refused = [
        via_proxy("", &format!("http://127.0.0.1:{pa}/no-ip-literal")),
        via_proxy("-p", &format!("http://127.0.0.1:{pa}/no-ip-connect")),
        via_proxy("", &format!("http://localhost:{pb}/no-other-port")),
        via_proxy(
            "-p",
            &format!("http://localhost:{pb}/no-other-port-connect"),
        ),
        via_proxy("", &format!("http://LOCALHOST:{pb}/no-upper")),
        via_proxy("-p", &format!("http://localhost.:{pb}/no-dot")),
        via_proxy("", &format!("http://2130706433:{pa}/no-int-ip")),
        format!(
            "P=${{HTTP_PROXY##*:}}; exec 3<>/dev/tcp/127.0.0.1/$P; \
             printf 'CONNECT 127.0.0.1:{pb} HTTP/1.1\\r\\n\\r\\nGET /no-raw HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3"
        ),
        format!("curl -sS -m 5 --noproxy '*' http://localhost:{pa}/no-direct"),
        format!("curl -sS -m 5 http://localhost:{pa}/no-direct-no-proxy"),
        format!("env -u HTTP_PROXY -u http_proxy curl -sS -m 5 http://127.0.0.1:{pb}/no-unset"),
        format!(
            "exec 3<>/dev/tcp/127.0.0.1/{pa}; printf 'GET /no-devtcp HTTP/1.0\\r\\n\\r\\n' >&3"
        ),
        format!(
            "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", {pb}), 3); \
             s.sendall(b\"GET /no-pysock HTTP/1.0\\r\\n\\r\\n\")'"
        ),
    ];
    let mut calls: Vec<_> = reached.to_vec();
    calls.extend(refused.iter().map(|c| bash(c)));
    let r = s.run(&calls, &job(&[format!("localhost:{pa}")]));
    s.assert_contained(&r);
    assert_eq!(
        r.result()["sandbox"]["hosts"],
        json!([format!("localhost:{pa}")])
    );
    let (seen_a, seen_b) = (a.seen(), b.seen());
    for ok in ["ok-plain", "ok-tunnel", "ok-spelled"] {
        assert!(
            seen_a.iter().any(|l| l.contains(ok)),
            "{ok} did not reach the listed host: {seen_a:?}\n{}",
            s.transcript(&r)
        );
    }
    let leaked: Vec<&String> = seen_a
        .iter()
        .chain(&seen_b)
        .filter(|l| !l.contains("/ok-"))
        .collect();
    assert!(
        leaked.is_empty(),
        "unlisted requests arrived: {leaked:?}\n{}",
        s.transcript(&r)
    );
    let transcript = s.transcript(&r);
    for refused in [
        format!("refused 127.0.0.1:{pa}"),
        format!("refused localhost:{pb}"),
    ] {
        assert!(
            transcript.contains(&refused),
            "{refused} not explained\n{transcript}"
        );
    }
    assert!(
        transcript.contains("is not in tools.bash.network"),
        "{transcript}"
    );
}

#[test]
fn an_ip_entry_does_not_let_a_name_that_resolves_to_it_through() {
    if !proxy_possible() {
        return;
    }
    let a = Listener::start();
    let pa = a.port;
    let s = Scene::new();
    let calls = [
        bash(&via_proxy("", &format!("http://127.0.0.1:{pa}/ok-ip"))),
        bash(&via_proxy("", &format!("http://localhost:{pa}/no-name"))),
        bash(&via_proxy(
            "-p",
            &format!("http://localhost:{pa}/no-name-connect"),
        )),
        bash(&via_proxy(
            "",
            &format!("http://LocalHost.:{pa}/no-name-spelled"),
        )),
        bash(&via_proxy(
            "-p",
            &format!("http://127.0.0.1:{}/no-other-port", pa + 1),
        )),
        bash(&via_proxy(
            "",
            &format!("http://[::ffff:127.0.0.1]:{pa}/no-mapped"),
        )),
    ];
    let r = s.run(&calls, &job(&[format!("127.0.0.1:{pa}")]));
    s.assert_contained(&r);
    let seen = a.seen();
    assert!(
        seen.iter().any(|l| l.contains("ok-ip")),
        "{seen:?}\n{}",
        s.transcript(&r)
    );
    let leaked: Vec<&String> = seen.iter().filter(|l| !l.contains("/ok-")).collect();
    assert!(leaked.is_empty(), "{leaked:?}\n{}", s.transcript(&r));
    assert!(
        s.transcript(&r)
            .contains(&format!("refused localhost:{pa}"))
    );
}

#[test]
fn a_bad_host_entry_is_a_located_error_and_explain_names_the_hosts() {
    let s = Scene::new();
    let r = s.run(
        &[],
        "tools: {bash: {network: [github.com, \"https://x.org\", \"a:99999\"]}}\n",
    );
    assert_eq!(r.code, 2, "{r:#?}");
    for part in [
        "tools.bash.network[1]",
        "https://x.org",
        "tools.bash.network[2]",
        "a:99999",
    ] {
        assert!(r.stderr.contains(part), "{part}\n{}", r.stderr);
    }
    let script = s.job_path().with_file_name("x");
    std::fs::write(&script, "{\"turns\": [{\"text\": \"done\"}]}").unwrap();
    std::fs::write(s.job_path(), "version: 1\nmodel: {provider: script, name: m, script: x}\nprompt: go\ntools: {bash: {network: [github.com, \"*.Example.com:8443\"]}}\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cn-run"))
        .arg("explain")
        .arg(s.job_path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("only github.com, *.example.com:8443 through cn-run's proxy"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run cn-run as the ordinary user `nobody` (65534) on one Bash call, in a workspace it owns:
/// the command's output. Needs root to change user; `None` where that or an unprivileged
/// bubblewrap is not possible here.
fn run_as_nobody(command: &str, hosts: &[String]) -> Option<String> {
    let uid = rustix::process::geteuid();
    let unprivileged_bwrap = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["bwrap", "--unshare-net", "--ro-bind", "/", "/", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !uid.is_root() || !namespaces_available() || !unprivileged_bwrap {
        eprintln!("SKIPPED: needs root to become nobody, and bubblewrap for an ordinary user");
        return None;
    }
    let base = tempfile::tempdir().unwrap();
    let (ws, home) = (base.path().join("ws"), base.path().join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let turns = json!({"turns": [{"tool_calls": [bash(command)]}, {"text": "done"}]});
    std::fs::write(base.path().join("script.json"), turns.to_string()).unwrap();
    let job_file = base.path().join("job.yaml");
    let text = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: '{}'}}\nprompt: go\n\
         permissions: {{mode: auto}}\n{}",
        base.path().join("script.json").display(),
        job(hosts)
    );
    std::fs::write(&job_file, text).unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(base.path())
        .status()
        .unwrap();
    assert!(chown.success());
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_cn-run"))
        .arg(&job_file)
        .arg("-C")
        .arg(&ws)
        .args(["--out"])
        .arg(base.path().join("out"))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(base.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = std::fs::read_to_string(base.path().join("out/events.jsonl")).unwrap();
    let finished: Vec<String> = events
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "tool.finished")
        .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    Some(finished.join("\n"))
}

/// An ordinary user's run (no shared namespace: each command has a network namespace of its
/// own) reaches the listed host through the proxy's relay and nothing else.
#[test]
fn an_ordinary_users_commands_reach_only_the_listed_hosts() {
    let (a, b) = (Listener::start(), Listener::start());
    let (pa, pb) = (a.port, b.port);
    let command = [
        via_proxy("", &format!("http://localhost:{pa}/ok-plain")),
        via_proxy("-p", &format!("http://localhost:{pa}/ok-tunnel")),
        via_proxy("", &format!("http://localhost:{pb}/no-other-port")),
        via_proxy("", &format!("http://127.0.0.1:{pa}/no-ip-literal")),
        via_proxy("", &format!("http://LOCALHOST:{pb}/no-upper-other-port")),
        format!("curl -sS -m 5 --noproxy '*' http://localhost:{pa}/no-direct"),
        format!("env -u HTTP_PROXY -u http_proxy curl -sS -m 5 http://127.0.0.1:{pb}/no-unset"),
        "ls -la / >/dev/null".to_owned(),
    ]
    .join("; echo; ");
    let Some(output) = run_as_nobody(&command, &[format!("localhost:{pa}")]) else {
        return;
    };
    let seen: Vec<String> = a.seen().into_iter().chain(b.seen()).collect();
    for ok in ["/ok-plain", "/ok-tunnel"] {
        assert!(
            seen.iter().any(|l| l.contains(ok)),
            "{ok} not reached: {seen:?}\n{output}"
        );
    }
    assert!(
        seen.iter().all(|l| !l.contains("/no-")),
        "a refused request reached a listener: {seen:?}\n{output}"
    );
    assert!(output.contains("is not in tools.bash.network"), "{output}");
}
