//! The host allow-list for an ordinary user. As root, cn-run's proxy listens inside the
//! run's shared network namespace ([`super::run_net`]); an ordinary user's cn-run cannot join
//! a namespace (that needs `CAP_SYS_ADMIN` in its owner), and each command gets a network
//! namespace of its own from bubblewrap. So the proxy listens on a Unix socket in the run's
//! private folder, bound into every sandbox at [`SOCKET_INSIDE`], and the command's
//! supervisor (`cn-run-call --relay`) listens on 127.0.0.1:[`PORT`] inside the command's
//! namespace and forwards each connection to that socket. The proxy makes the same
//! decisions either way; the namespace still has no other way out.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use super::error::{SandboxError, os};
use super::hosts::HostRule;
use super::proxy::{self, Proxy, ProxyListener};

/// The proxy's port inside each command's own network namespace.
pub(crate) const PORT: u16 = 3128;
/// Where the proxy's socket appears inside the sandbox (on bubblewrap's own `/dev`).
pub(crate) const SOCKET_INSIDE: &str = "/dev/cn-run-proxy.sock";

/// The run's proxy on a Unix socket.
#[derive(Debug)]
pub struct RunRelay {
    pub(crate) proxy: Proxy,
    /// The socket on the host.
    pub(crate) socket: PathBuf,
}

impl RunRelay {
    /// Listen on `dir/proxy.sock` and serve `hosts` there.
    pub(crate) fn start(dir: &Path, hosts: &[HostRule]) -> Result<RunRelay, SandboxError> {
        let socket = dir.join("proxy.sock");
        let listener = UnixListener::bind(&socket)
            .map_err(os(format!("cannot listen on {}", socket.display())))?;
        let proxy = proxy::start(ProxyListener::Unix(listener), hosts.to_vec())?;
        Ok(RunRelay { proxy, socket })
    }
}

/// Inside the command's namespace: listen on 127.0.0.1:[`PORT`] and forward every connection
/// to `socket`, on threads of their own, for as long as the process lives.
pub(crate) fn serve_inside(socket: PathBuf) -> Result<(), SandboxError> {
    let listener = TcpListener::bind(("127.0.0.1", PORT)).map_err(os(format!(
        "cannot listen on 127.0.0.1:{PORT} for the proxy"
    )))?;
    std::thread::Builder::new()
        .name("cn-run-relay".into())
        .spawn(move || {
            for client in listener.incoming().flatten() {
                let socket = socket.clone();
                let _ = std::thread::Builder::new().spawn(move || forward(client, &socket));
            }
        })
        .map(|_| ())
        .map_err(os("cannot start the relay's thread"))
}

/// Copy both ways between `client` and a new connection to the proxy.
fn forward(client: TcpStream, socket: &Path) {
    let Ok(upstream) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(client_w), Ok(upstream_r)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let back =
        std::thread::spawn(move || pump(upstream_r, client_w, |c| c.shutdown(Shutdown::Write)));
    pump(client, upstream, |u| u.shutdown(Shutdown::Write));
    let _ = back.join();
}

/// Copy `from` into `to` until `from` ends, then end `to`'s writing side.
fn pump<R: Read, W: Write>(mut from: R, mut to: W, end: impl FnOnce(&W) -> std::io::Result<()>) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = end(&to);
}
