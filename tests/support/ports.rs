//! The one way the suite picks a loopback port for a server it starts itself (or for a
//! URL nobody must answer): [`Port::reserve`] binds a socket to a port the kernel picks
//! and keeps it bound, without listening, for as long as the test holds it.
//!
//! Bound, the port is nobody else's: another process's `bind` gets "address in use" and
//! the kernel never hands it out as an ephemeral port, so it cannot be taken between the
//! moment the test learns it and the moment its server binds it (the race of "bind port
//! 0, read the port, close, start the server"). Not listening, a connection to it is
//! refused until the server starts. The server the test starts binds the same port with
//! `SO_REUSEADDR` — which tokio's, std's listener on Linux and Node's all set — and
//! Linux lets it, since the reserving socket does not listen.

use std::net::{Ipv4Addr, SocketAddr};

use socket2::{Domain, Socket, Type};

/// A loopback port held for one test.
#[derive(Debug)]
pub struct Port {
    /// Held, not read: the port is reserved while it is open.
    _socket: Socket,
    port: u16,
}

impl Port {
    /// A port of 127.0.0.1 nobody else can bind while this lives.
    pub fn reserve() -> Port {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a TCP socket");
        // Bound without SO_REUSEADDR, so the kernel picks a port no socket holds...
        socket
            .bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())
            .expect("a loopback port");
        // ...then marked reusable, so the server under test (and it alone: it must set
        // SO_REUSEADDR too) can bind it and listen.
        socket.set_reuse_address(true).expect("SO_REUSEADDR");
        let port = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.port())
            .expect("the bound port");
        Port {
            _socket: socket,
            port,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}
