//! Task-only tools (`execution.taskSupport: "required"`, MCP 2025-11-25) over streamable HTTP
//! are not offered whichever way the server frames its `tools/list` answer: a plain JSON body
//! or server-sent events. A small loopback MCP server written here answers in either framing
//! and in several shapes (pages, key order, charset parameters, a notification before the
//! answer, every tool task-only); the hub must offer exactly the tools that can be called
//! directly, say which it left out, and still call the others. The server insists on its
//! session id and on the job's header, so the list request cn-run sends itself carries both.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cn_run::mcp::{McpHub, ServerConfig, ServerState, Transport};
use cn_run::tools::{ToolContext, ToolLimits, ToolShared};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    Json,
    Sse,
}

/// How the server lists its tools.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// One task-only tool among plain ones.
    OneRequired,
    /// Every `taskSupport` value and none at all: only "required" is left out.
    AllValues,
    /// The task-only tool on the second page (a `nextCursor` on the first).
    Paged,
    /// Every tool task-only.
    AllRequired,
    /// No tool task-only (the control: everything is offered, nothing is said).
    NoneRequired,
    /// `"id"` after `"result"` and the content type with parameters in odd case.
    KeyOrderAndCharset,
    /// A log notification on the stream before the answer (SSE only; JSON sends the answer).
    NotificationFirst,
    /// `execution` with other members beside `taskSupport`.
    ExtraMembers,
}

fn tool(name: &str, task: Option<&str>) -> Value {
    let mut t = json!({"name": name, "inputSchema": {"type": "object"}});
    if let Some(task) = task {
        t["execution"] = json!({ "taskSupport": task });
    }
    t
}

/// The tools of page `cursor` and the next cursor.
fn page(shape: Shape, cursor: Option<&str>) -> (Vec<Value>, Option<&'static str>) {
    match (shape, cursor) {
        (Shape::OneRequired | Shape::KeyOrderAndCharset | Shape::NotificationFirst, _) => (
            vec![
                tool("echo", None),
                tool("research", Some("required")),
                tool("sum", None),
            ],
            None,
        ),
        (Shape::AllValues, _) => (
            vec![
                tool("echo", Some("forbidden")),
                tool("research", Some("required")),
                tool("sum", Some("optional")),
                tool("plain", None),
            ],
            None,
        ),
        (Shape::Paged, None) => (vec![tool("echo", None), tool("sum", None)], Some("p2")),
        (Shape::Paged, Some(_)) => (
            vec![tool("research", Some("required")), tool("plain", None)],
            None,
        ),
        (Shape::AllRequired, _) => (
            vec![
                tool("research", Some("required")),
                tool("crawl", Some("required")),
            ],
            None,
        ),
        (Shape::NoneRequired, _) => (
            vec![
                tool("echo", Some("forbidden")),
                tool("sum", Some("optional")),
                tool("plain", None),
            ],
            None,
        ),
        (Shape::ExtraMembers, _) => {
            let mut research = tool("research", Some("required"));
            research["execution"]["ttlHint"] = json!(60_000);
            research["annotations"] = json!({"readOnlyHint": true});
            (vec![tool("echo", None), research, tool("sum", None)], None)
        }
    }
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    lists: AtomicUsize,
    refused: Mutex<Vec<String>>,
}

struct Server {
    framing: Framing,
    shape: Shape,
    seen: Seen,
}

const SESSION: &str = "sess-42";

impl Server {
    async fn serve(self: Arc<Self>, listener: TcpListener) {
        while let Ok((stream, _)) = listener.accept().await {
            let me = Arc::clone(&self);
            tokio::spawn(async move { me.answer(stream).await });
        }
    }

    async fn answer(&self, mut stream: TcpStream) {
        let Some((head, body)) = read_request(&mut stream).await else {
            return;
        };
        let reply = self.reply(&head, &body);
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
    }

    fn reply(&self, head: &str, body: &[u8]) -> String {
        let lower = head.to_ascii_lowercase();
        if !lower.starts_with("post") {
            return response("405 Method Not Allowed", "text/plain", "");
        }
        let message: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        if !lower.contains("x-job-key: k1") {
            self.seen
                .refused
                .lock()
                .unwrap()
                .push(format!("{method}: no job header"));
            return response("401 Unauthorized", "text/plain", "");
        }
        if method != "initialize" && !lower.contains(&format!("mcp-session-id: {SESSION}")) {
            self.seen
                .refused
                .lock()
                .unwrap()
                .push(format!("{method}: no session"));
            return response("400 Bad Request", "text/plain", "no session");
        }
        let id = message["id"].clone();
        let result = match method.as_str() {
            "initialize" => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hand-made", "version": "1.0.0"},
            }),
            "tools/list" => {
                self.seen.lists.fetch_add(1, Ordering::SeqCst);
                let (tools, next) = page(self.shape, message["params"]["cursor"].as_str());
                let mut r = json!({ "tools": tools });
                if let Some(next) = next {
                    r["nextCursor"] = json!(next);
                }
                r
            }
            "tools/call" => {
                let name = message["params"]["name"].as_str().unwrap_or_default();
                json!({"content": [{"type": "text", "text": format!("called {name}")}]})
            }
            _ => return response("202 Accepted", "text/plain", ""),
        };
        self.frame(&method, &id, &result)
    }

    fn frame(&self, method: &str, id: &Value, result: &Value) -> String {
        let answer = match self.shape {
            Shape::KeyOrderAndCharset => {
                format!(r#"{{"result":{result},"jsonrpc":"2.0","id":{id}}}"#)
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        };
        let charset = matches!(self.shape, Shape::KeyOrderAndCharset);
        match self.framing {
            Framing::Json if charset => {
                response("200 OK", "Application/JSON; Charset=UTF-8", &answer)
            }
            Framing::Json => response("200 OK", "application/json", &answer),
            Framing::Sse => {
                let mut events = String::new();
                if matches!(self.shape, Shape::NotificationFirst) && method == "tools/list" {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": "listing"}});
                    events.push_str(&format!("event: message\ndata: {note}\n\n"));
                }
                events.push_str(&format!("event: message\nid: 1\ndata: {answer}\n\n"));
                let kind = if charset {
                    "Text/Event-Stream; charset=utf-8"
                } else {
                    "text/event-stream"
                };
                response("200 OK", kind, &events)
            }
        }
    }
}

fn response(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nMcp-Session-Id: {SESSION}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// One request's head and body (by Content-Length).
async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0usize);
        while buf.len() < end + 4 + length {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        return Some((head, buf[end + 4..end + 4 + length].to_vec()));
    }
}

async fn start(framing: Framing, shape: Shape) -> (Arc<Server>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = Arc::new(Server {
        framing,
        shape,
        seen: Seen::default(),
    });
    tokio::spawn(Arc::clone(&server).serve(listener));
    (server, url)
}

fn config(url: &str) -> ServerConfig {
    ServerConfig {
        name: "hm".into(),
        transport: Transport::Http {
            url: url.into(),
            headers: vec![("X-Job-Key".into(), "k1".into())],
        },
        optional: false,
        startup_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(20),
    }
}

fn ctx() -> ToolContext {
    let dir = std::env::temp_dir();
    let shared = ToolShared::new(
        dir.clone(),
        vec![],
        CancellationToken::new(),
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

/// Start the hub against the hand-made server and check what it offers.
async fn check(framing: Framing, shape: Shape, offered: &[&str], hidden: &[&str]) {
    let case = format!("{framing:?} {shape:?}");
    let (server, url) = start(framing, shape).await;
    let (hub, statuses) = McpHub::start(vec![config(&url)], &[]).await.unwrap();
    assert_eq!(
        statuses[0].status,
        ServerState::Ready,
        "{case}: {statuses:?}"
    );
    let mut names: Vec<String> = hub.tools().iter().map(|t| t.name().to_owned()).collect();
    names.sort();
    let mut expected: Vec<String> = offered.iter().map(|n| format!("mcp__hm__{n}")).collect();
    expected.sort();
    assert_eq!(names, expected, "{case}");
    let message = statuses[0].message.clone().unwrap_or_default();
    for name in hidden {
        assert!(
            message.contains(name) && message.contains("tasks"),
            "{case}: {message}"
        );
    }
    if hidden.is_empty() {
        assert!(!message.contains("tasks"), "{case}: {message}");
    }
    for tool in hub.tools() {
        let out = tool.run(json!({}), &ctx()).await.unwrap().content;
        assert!(out.contains("called "), "{case}: {out}");
    }
    let pages = if matches!(shape, Shape::Paged) { 2 } else { 1 };
    assert_eq!(
        server.seen.lists.load(Ordering::SeqCst),
        pages,
        "{case}: one request a page"
    );
    assert!(
        server.seen.refused.lock().unwrap().is_empty(),
        "{case}: {:?}",
        server.seen.refused
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn task_only_tools_are_not_offered_in_either_framing_and_the_others_are_called() {
    for framing in [Framing::Json, Framing::Sse] {
        check(framing, Shape::OneRequired, &["echo", "sum"], &["research"]).await;
        check(
            framing,
            Shape::AllValues,
            &["echo", "sum", "plain"],
            &["research"],
        )
        .await;
        check(
            framing,
            Shape::Paged,
            &["echo", "sum", "plain"],
            &["research"],
        )
        .await;
        check(framing, Shape::AllRequired, &[], &["research", "crawl"]).await;
        check(framing, Shape::NoneRequired, &["echo", "sum", "plain"], &[]).await;
        check(
            framing,
            Shape::KeyOrderAndCharset,
            &["echo", "sum"],
            &["research"],
        )
        .await;
        check(
            framing,
            Shape::NotificationFirst,
            &["echo", "sum"],
            &["research"],
        )
        .await;
        check(
            framing,
            Shape::ExtraMembers,
            &["echo", "sum"],
            &["research"],
        )
        .await;
    }
}

/// The official Python SDK (`mcp` 2.x, installed with the reference servers) serving
/// `tests/fixtures/mcp_task_server.py` in `framing` on a port it picks, killed when dropped.
struct PythonServer(std::process::Child);

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python_server(framing: &str) -> Option<(PythonServer, u16)> {
    use crate::support::runner::repo_root;
    let dir = std::env::var_os("CN_RUN_MCP_REF")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-ref"));
    let python = dir.join("py/bin/python");
    if !python.exists() {
        eprintln!(
            "skipped: {} is not installed; run .ci/install-mcp-reference",
            python.display()
        );
        return None;
    }
    let mut child = std::process::Command::new(python)
        .arg(repo_root().join("tests/fixtures/mcp_task_server.py"))
        .arg(framing)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server binds port 0 and prints the port once it listens: no free-port guess to
    // race, no polling. A server that fails to start closes stdout: an empty line.
    let stdout = child.stdout.take().unwrap();
    let server = PythonServer(child);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
    let port: u16 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the Python server did not start: {line:?}"));
    Some((server, port))
}

#[test]
fn the_python_sdk_server_keeps_its_task_only_tool_out_of_the_run_in_both_framings() {
    use crate::support::runner::{cn_run, run, write_files};
    for framing in ["json", "sse"] {
        let Some((_server, port)) = python_server(framing) else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let job = format!(
            "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\n\
             permissions: {{allow: [mcp__py__echo, mcp__py__research]}}\n\
             mcp_servers:\n  py:\n    url: http://127.0.0.1:{port}/mcp\n"
        );
        let script = "turns:\n  - tool_calls:\n      - {name: mcp__py__echo, id: e, arguments: {}}\n      - {name: mcp__py__research, id: r, arguments: {}}\n  - text: done\n";
        write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", script)]);
        let mut cmd = cn_run(tmp.path());
        cmd.arg("job.yaml");
        let r = run(cmd, Some(&tmp.path().join("out")));
        assert_eq!(r.code, 0, "{framing}: {r:#?}");
        let server = &r.result()["mcp_servers"][0];
        assert_eq!(server["status"], "ready", "{framing}: {server}");
        assert_eq!(server["tools"], 2, "{framing}: {server}");
        let message = server["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("research") && message.contains("tasks"),
            "{framing}: {message}"
        );
        let out = |id: &str| {
            r.events_of("tool.finished")
                .into_iter()
                .find(|e| e["call_id"] == id)
                .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
                .unwrap_or_default()
        };
        assert_eq!(out("e"), "called echo", "{framing}");
        assert!(
            out("r").contains("Unknown tool `mcp__py__research`"),
            "{framing}: {}",
            out("r")
        );
        let offered = r.events()[0]["tools"].to_string();
        assert!(
            offered.contains("mcp__py__sum") && !offered.contains("mcp__py__research"),
            "{framing}: {offered}"
        );
    }
}
