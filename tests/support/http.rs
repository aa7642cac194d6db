//! A scripted HTTP/1.1 server on 127.0.0.1 for provider tests.
//!
//! Replies are consumed in order, one per request, and every request is recorded. It exists
//! (instead of a mock-server crate) because the fault tests need control below the HTTP
//! library: a body that stalls mid-stream, a connection reset or closed mid-body, and exact
//! chunk boundaries (each [`Chunk`] is written and flushed as one HTTP chunk).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// One piece of a streamed body, written after `delay`.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub delay: Duration,
}

impl Chunk {
    pub fn after(delay_ms: u64, bytes: impl Into<Vec<u8>>) -> Chunk {
        Chunk {
            bytes: bytes.into(),
            delay: Duration::from_millis(delay_ms),
        }
    }
}

impl From<String> for Chunk {
    fn from(text: String) -> Chunk {
        Chunk::after(0, text)
    }
}

impl From<&str> for Chunk {
    fn from(text: &str) -> Chunk {
        Chunk::after(0, text)
    }
}

impl From<Vec<u8>> for Chunk {
    fn from(bytes: Vec<u8>) -> Chunk {
        Chunk::after(0, bytes)
    }
}

#[derive(Debug, Clone)]
enum Body {
    Fixed(Vec<u8>),
    Chunked(Vec<Chunk>),
}

/// What goes wrong after a number of body bytes.
#[derive(Debug, Clone, Copy)]
enum Fault {
    Stall(usize),
    Reset(usize),
    Close(usize),
    /// No answer at all: not even the status line (a server that hangs on a request).
    Hang,
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    fault: Option<Fault>,
}

impl Reply {
    /// A `text/event-stream` body sent with chunked transfer encoding, one HTTP chunk per item.
    pub fn sse<C: Into<Chunk>>(status: u16, chunks: impl IntoIterator<Item = C>) -> Reply {
        Reply {
            status,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: Body::Chunked(chunks.into_iter().map(Into::into).collect()),
            fault: None,
        }
    }

    /// A JSON body with a `content-length`.
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply::text(status, "application/json", body.to_string())
    }

    /// Any body with a `content-length`.
    pub fn text(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: Body::Fixed(body.into()),
            fault: None,
        }
    }

    /// Adds a header, replacing one of the same name.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }

    /// After `bytes` body bytes, send nothing more and keep the connection open.
    pub fn stall_after(mut self, bytes: usize) -> Reply {
        self.fault = Some(Fault::Stall(bytes));
        self
    }

    /// No answer at all, the connection kept open: the client waits for the status line.
    pub fn hang(mut self) -> Reply {
        self.fault = Some(Fault::Hang);
        self
    }

    /// After `bytes` body bytes, reset the connection (TCP RST).
    pub fn reset_after(mut self, bytes: usize) -> Reply {
        self.fault = Some(Fault::Reset(bytes));
        self
    }

    /// After `bytes` body bytes, close the connection cleanly, leaving the body incomplete.
    pub fn close_after(mut self, bytes: usize) -> Reply {
        self.fault = Some(Fault::Close(bytes));
        self
    }
}

/// A request as the server received it. Header names are lowercase.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// The running server; it stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    task: JoinHandle<()>,
}

impl MockServer {
    pub async fn start(replies: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("no local address: {e}"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Source::Queue(Arc::new(Mutex::new(VecDeque::from(replies))));
        let task = tokio::spawn(accept(listener, replies, Arc::clone(&requests)));
        MockServer {
            addr,
            requests,
            task,
        }
    }

    /// A server whose reply to each request is computed by `handler` from the request.
    pub async fn start_with(
        handler: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("no local address: {e}"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Source::Handler(Arc::new(handler));
        let task = tokio::spawn(accept(listener, replies, Arc::clone(&requests)));
        MockServer {
            addr,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The recorded requests, readable from another thread while the server runs.
    pub fn clone_requests(&self) -> impl Fn() -> Vec<RecordedRequest> + Send + Sync + 'static {
        let requests = Arc::clone(&self.requests);
        move || {
            requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where replies come from: a fixed queue, or a function of the request.
#[derive(Clone)]
enum Source {
    Queue(Arc<Mutex<VecDeque<Reply>>>),
    Handler(Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>),
}

type Replies = Source;
type Requests = Arc<Mutex<Vec<RecordedRequest>>>;

async fn accept(listener: TcpListener, replies: Replies, requests: Requests) {
    // Connection tasks live in the set, so aborting this task ends them too.
    let mut connections = JoinSet::new();
    while let Ok((socket, _)) = listener.accept().await {
        let _ = socket.set_nodelay(true);
        connections.spawn(connection(socket, replies.clone(), Arc::clone(&requests)));
    }
}

async fn connection(mut socket: TcpStream, replies: Replies, requests: Requests) {
    let mut buf = Vec::new();
    while let Some(request) = read_request(&mut socket, &mut buf).await {
        let next = match &replies {
            Source::Queue(q) => q.lock().unwrap_or_else(PoisonError::into_inner).pop_front(),
            Source::Handler(f) => Some(f(&request)),
        };
        requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        let reply = next.unwrap_or_else(|| {
            Reply::json(
                500,
                &serde_json::json!({"error": {"message": "mock server: no reply left"}}),
            )
        });
        match write_reply(&mut socket, reply).await {
            Ok(true) => {}
            Ok(false) | Err(_) => return,
        }
    }
}

async fn read_more(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut piece = [0u8; 8192];
    let n = socket.read(&mut piece).await.ok()?;
    (n > 0).then(|| buf.extend_from_slice(&piece[..n]))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<RecordedRequest> {
    let head_end = loop {
        if let Some(pos) = find(buf, b"\r\n\r\n") {
            break pos;
        }
        read_more(socket, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    buf.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(socket, buf).await?
    } else {
        let len: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < len {
            read_more(socket, buf).await?;
        }
        buf.drain(..len).collect()
    };
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
    })
}

async fn read_chunked(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(pos) = find(buf, b"\r\n") {
                break pos;
            }
            read_more(socket, buf).await?;
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        buf.drain(..line_end + 2);
        while buf.len() < size + 2 {
            read_more(socket, buf).await?;
        }
        body.extend(buf.drain(..size));
        buf.drain(..2);
        if size == 0 {
            return Some(body);
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Writes `reply`; `Ok(false)` when the connection must not be reused (after a fault).
async fn write_reply(socket: &mut TcpStream, reply: Reply) -> std::io::Result<bool> {
    if matches!(reply.fault, Some(Fault::Hang)) {
        std::future::pending::<()>().await;
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match &reply.body {
        Body::Fixed(bytes) => head.push_str(&format!("content-length: {}\r\n", bytes.len())),
        Body::Chunked(_) => head.push_str("transfer-encoding: chunked\r\n"),
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    let limit = match reply.fault {
        Some(Fault::Stall(n) | Fault::Reset(n) | Fault::Close(n)) => Some(n),
        Some(Fault::Hang) | None => None,
    };
    let complete = match reply.body {
        Body::Fixed(bytes) => {
            let n = bytes.len().min(limit.unwrap_or(usize::MAX));
            socket.write_all(&bytes[..n]).await?;
            n == bytes.len()
        }
        Body::Chunked(chunks) => write_chunks(socket, chunks, limit).await?,
    };
    socket.flush().await?;
    match reply.fault {
        None if complete => Ok(true),
        None => Ok(false),
        Some(fault) => {
            fail(socket, fault).await;
            Ok(false)
        }
    }
}

/// Writes chunks until `limit` body bytes are out; returns whether the whole body (with its
/// terminating chunk) was written. With a limit, the terminating chunk is never written.
async fn write_chunks(
    socket: &mut TcpStream,
    chunks: Vec<Chunk>,
    limit: Option<usize>,
) -> std::io::Result<bool> {
    let mut left = limit.unwrap_or(usize::MAX);
    for chunk in chunks {
        if !chunk.delay.is_zero() {
            tokio::time::sleep(chunk.delay).await;
        }
        let n = chunk.bytes.len().min(left);
        if n > 0 {
            let mut frame = format!("{n:x}\r\n").into_bytes();
            frame.extend_from_slice(&chunk.bytes[..n]);
            frame.extend_from_slice(b"\r\n");
            socket.write_all(&frame).await?;
            socket.flush().await?;
        }
        left -= n;
        if n < chunk.bytes.len() {
            return Ok(false);
        }
    }
    if limit.is_some() {
        return Ok(false);
    }
    socket.write_all(b"0\r\n\r\n").await?;
    Ok(true)
}

async fn fail(socket: &mut TcpStream, fault: Fault) {
    match fault {
        Fault::Stall(_) | Fault::Hang => std::future::pending::<()>().await,
        Fault::Reset(_) => {
            let _ = socket.set_zero_linger();
        }
        Fault::Close(_) => {
            let _ = socket.shutdown().await;
        }
    }
}
