//! The egress proxy of `tools.bash.network: [hosts]`: the only way out of the run's network
//! namespace. It listens on 127.0.0.1 *inside* that namespace (the socket was made there by
//! [`super::run_net`]) and connects out from cn-run's own namespace, so commands that honour
//! `HTTP_PROXY`/`HTTPS_PROXY` reach the listed hosts and nothing else: HTTP `CONNECT` for
//! TLS and any TCP protocol, plain HTTP requests in absolute form. A refused request gets a
//! `403` whose body says why, and is logged for the Bash tool's result. Connections that
//! ignore the proxy variables find no route out of the namespace.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio_util::sync::CancellationToken;

use super::error::{SandboxError, os};
use super::hosts::{HostRule, allowed, normalize, split_port};

/// The most a request head may hold before it is refused.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client has to send its request head, and the proxy to reach a host.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Requests the proxy refused, in order (`host:port — why`).
#[derive(Debug, Default)]
pub(crate) struct Refusals(Mutex<Vec<String>>);

impl Refusals {
    fn push(&self, line: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
    /// How many refusals there were so far (a mark for [`Refusals::since`]).
    pub(crate) fn mark(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
    /// The refusals after `mark`.
    pub(crate) fn since(&self, mark: usize) -> Vec<String> {
        let log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        log.get(mark..).unwrap_or_default().to_vec()
    }
}

/// Where the proxy listens: TCP on 127.0.0.1 inside the run's network namespace (root), or
/// a Unix socket that a relay inside each command's own namespace forwards to (an ordinary
/// user: cn-run cannot join a namespace there, see [`super::relay`]).
#[derive(Debug)]
pub(crate) enum ProxyListener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

/// A running proxy; stopped when dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    pub(crate) port: u16,
    pub(crate) refusals: Arc<Refusals>,
    stop: CancellationToken,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serve `listener` on a thread of its own (started from a thread in cn-run's own network
/// namespace, so its connections go out from there).
pub(crate) fn start(listener: ProxyListener, rules: Vec<HostRule>) -> Result<Proxy, SandboxError> {
    let port = match &listener {
        ProxyListener::Tcp(l) => (l.local_addr())
            .map_err(os("the proxy's socket has no address"))?
            .port(),
        ProxyListener::Unix(_) => super::relay::PORT,
    };
    match &listener {
        ProxyListener::Tcp(l) => l.set_nonblocking(true),
        ProxyListener::Unix(l) => l.set_nonblocking(true),
    }
    .map_err(os("cannot make the proxy's socket non-blocking"))?;
    let refusals = Arc::new(Refusals::default());
    let stop = CancellationToken::new();
    let (log, token) = (Arc::clone(&refusals), stop.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(os("cannot start the proxy's runtime"))?;
    std::thread::Builder::new()
        .name("cn-run-proxy".into())
        .spawn(move || runtime.block_on(serve(listener, rules.into(), log, token)))
        .map_err(os("cannot start the proxy's thread"))?;
    Ok(Proxy {
        port,
        refusals,
        stop,
    })
}

async fn serve(
    listener: ProxyListener,
    rules: Arc<[HostRule]>,
    refusals: Arc<Refusals>,
    stop: CancellationToken,
) {
    match listener {
        ProxyListener::Tcp(l) => {
            if let Ok(l) = TcpListener::from_std(l) {
                accept_until(&stop, || l.accept(), &rules, &refusals).await;
            }
        }
        ProxyListener::Unix(l) => {
            if let Ok(l) = UnixListener::from_std(l) {
                accept_until(&stop, || l.accept(), &rules, &refusals).await;
            }
        }
    }
}

/// Hands every client `accept` gives to its own task, until `stop`.
async fn accept_until<S, A, F>(
    stop: &CancellationToken,
    accept: impl Fn() -> F,
    rules: &Arc<[HostRule]>,
    refusals: &Arc<Refusals>,
) where
    F: Future<Output = std::io::Result<(S, A)>>,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            Ok((client, _)) = accept() => spawn_handle(client, rules, refusals),
        }
    }
}

fn spawn_handle<S>(client: S, rules: &Arc<[HostRule]>, refusals: &Arc<Refusals>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (rules, refusals) = (Arc::clone(rules), Arc::clone(refusals));
    tokio::spawn(async move {
        let _ = handle(client, &rules, &refusals).await;
    });
}

/// One parsed request: where to, and what to send there first.
struct Request {
    host: String,
    port: u16,
    /// `CONNECT`: answer 200 and relay; else send `head` (rewritten to origin form).
    connect: bool,
    head: Vec<u8>,
}

async fn handle<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    rules: &[HostRule],
    refusals: &Refusals,
) -> std::io::Result<()> {
    let (buf, len) = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(Some(head))) => head,
        _ => return answer(&mut client, 400, "no complete HTTP request head arrived").await,
    };
    let req = match parse(&buf[..len]) {
        Ok(r) => r,
        Err(why) => return answer(&mut client, 400, &why.to_string()).await,
    };
    if !allowed(rules, &req.host, req.port) {
        let listed: Vec<String> = rules.iter().map(ToString::to_string).collect();
        let why = format!(
            "{}:{} is not in tools.bash.network (allowed: {}); commands reach only the listed hosts",
            req.host,
            req.port,
            listed.join(", ")
        );
        refusals.push(why.clone());
        return answer(&mut client, 403, &why).await;
    }
    let target = (normalize(&req.host), req.port);
    let mut upstream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(target)).await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return answer(
                &mut client,
                502,
                &format!("cannot reach {}:{}: {e}", req.host, req.port),
            )
            .await;
        }
        Err(_) => {
            return answer(
                &mut client,
                504,
                &format!("{}:{} did not answer in time", req.host, req.port),
            )
            .await;
        }
    };
    if req.connect {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&req.head).await?;
    }
    upstream.write_all(&buf[len..]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Read until the end of the request head; the buffer and the head's length (bytes after
/// it belong to the body or the tunnel). `None` when the client closed or sent too much.
async fn read_head<S: AsyncRead + Unpin>(
    client: &mut S,
) -> std::io::Result<Option<(Vec<u8>, usize)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some((buf, end + 4)));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
    }
}

/// Why a request to the proxy is refused with 400 (the text is the answer's body).
#[derive(Debug, thiserror::Error)]
enum BadRequest {
    #[error("the request head is not valid HTTP/1")]
    NotHttp,
    #[error("`{0}`: this proxy takes `CONNECT host:port` or a request for an http:// URL")]
    NotHttpUrl(String),
    #[error("`{0}`: a user name in the address is not accepted")]
    UserName(String),
    #[error("`{0}` is not a host and port")]
    NotHostPort(String),
}

/// Read a request head: `CONNECT host:port` or `METHOD http://host[:port]/path`.
fn parse(head: &[u8]) -> Result<Request, BadRequest> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(BadRequest::NotHttp),
    }
    let (method, target) = (req.method.unwrap_or_default(), req.path.unwrap_or_default());
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Request {
            host,
            port,
            connect: true,
            head: Vec::new(),
        });
    }
    let rest = strip_prefix_ignore_case(target, "http://")
        .ok_or_else(|| BadRequest::NotHttpUrl(target.to_owned()))?;
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(split);
    let (host, port) = authority(auth, Some(80))?;
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let mut out = format!("{method} {path} HTTP/1.{}\r\n", req.version.unwrap_or(1)).into_bytes();
    for h in req.headers.iter() {
        let hop = ["proxy-connection", "proxy-authorization"];
        if !hop.iter().any(|n| h.name.eq_ignore_ascii_case(n)) {
            out.extend_from_slice(h.name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(h.value);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
    Ok(Request {
        host,
        port,
        connect: false,
        head: out,
    })
}

/// `host[:port]` of a request; `default` when the port may be left out.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), BadRequest> {
    let bad = || BadRequest::NotHostPort(text.to_owned());
    if text.contains('@') {
        return Err(BadRequest::UserName(text.to_owned()));
    }
    let (host, port) = split_port(text).ok_or_else(bad)?;
    let port = port.or(default).ok_or_else(bad)?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Answer with `status` and `why` (prefixed `cn-run sandbox:`) and close.
async fn answer<S: AsyncWrite + Unpin>(
    client: &mut S,
    status: u16,
    why: &str,
) -> std::io::Result<()> {
    let reason = match status {
        403 => "Forbidden",
        502 => "Bad Gateway",
        504 => "Gateway Timeout",
        _ => "Bad Request",
    };
    let body = format!("cn-run sandbox: {why}\n");
    let text = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_for_their_destination() {
        let r = parse(b"CONNECT Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.connect),
            ("Example.com", 443, true)
        );
        let r =
            parse(b"GET http://h.test:8080/a?b HTTP/1.1\r\nHost: h\r\nProxy-Connection: k\r\n\r\n")
                .unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.connect),
            ("h.test", 8080, false)
        );
        assert_eq!(r.head, b"GET /a?b HTTP/1.1\r\nHost: h\r\n\r\n");
        let r = parse(b"GET HTTP://[::1]?q HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 80));
        assert_eq!(r.head, b"GET /?q HTTP/1.0\r\n\r\n");
        for bad in [
            &b"GET /local HTTP/1.1\r\nHost: h\r\n\r\n"[..],
            b"CONNECT h HTTP/1.1\r\n\r\n",
            b"CONNECT u@h:443 HTTP/1.1\r\n\r\n",
            b"GET http://u:p@h/ HTTP/1.1\r\n\r\n",
            b"GET https://h/ HTTP/1.1\r\n\r\n",
            b"\x00\x01garbage\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
