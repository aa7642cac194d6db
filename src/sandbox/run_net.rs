//! One network, IPC and UTS namespace for all the contained commands of a run, made once
//! when the run starts instead of once per command (a new network namespace per command
//! was the largest part of bubblewrap's cost per call), and the home of the egress proxy's
//! listening socket.
//!
//! How, without `unsafe`: namespaces belong to threads, and a child process starts in the
//! namespaces of the thread that forks it. A thread of cn-run's own ("spawner") makes new
//! network, IPC and UTS namespaces for itself (`unshare`; the network namespace's loopback
//! device is brought up over rtnetlink: [`super::loopback`]), binds the proxy's socket
//! there when the job lists hosts, and from then on forks every bubblewrap of the run.
//! bubblewrap's `--die-with-parent` follows that thread, which lives as long as the run's
//! policy: when cn-run dies (even by SIGKILL), every command dies too.
//! The proxy itself runs on a thread started from cn-run's own namespace, so it connects out.
//!
//! Making a namespace needs `CAP_SYS_ADMIN` (cn-run as root, as in most CI containers);
//! without it [`RunNet::new`] fails and each command gets namespaces of its own as before.

use std::sync::Arc;

use nix::sched::{CloneFlags, unshare};

use super::error::{SandboxError, os};
use super::hosts::HostRule;
use super::proxy::{self, Proxy, Refusals};
use super::spawner::Spawner;

/// The run's shared namespaces and, with a host list, its proxy.
#[derive(Debug)]
pub struct RunNet {
    spawner: Spawner,
    /// The spawner thread's id (the run's cgroup takes it in: [`super::RunCgroup`]).
    tid: i32,
    proxy: Option<Proxy>,
}

impl RunNet {
    /// Make the namespaces (a new network namespace only when `isolate`, i.e. the job does
    /// not allow the network); start the proxy for `hosts` when there are any.
    pub(crate) fn new(hosts: &[HostRule], isolate: bool) -> Result<RunNet, SandboxError> {
        let listen = !hosts.is_empty();
        let (spawner, (tid, listener)) = Spawner::start("cn-run-sandbox-net", move || {
            let tid = rustix::thread::gettid().as_raw_nonzero().get();
            enter(isolate).and_then(|()| Ok((tid, bind(listen)?)))
        })?;
        let proxy = match listener {
            Some(l) => Some(proxy::start(proxy::ProxyListener::Tcp(l), hosts.to_vec())?),
            None => None,
        };
        Ok(RunNet {
            spawner,
            tid,
            proxy,
        })
    }

    /// The spawner thread's id.
    pub(crate) fn tid(&self) -> i32 {
        self.tid
    }

    /// The spawner thread (what it forks starts in the run's namespaces).
    pub(crate) fn spawner(&self) -> &Spawner {
        &self.spawner
    }

    /// Run `f` on the spawner thread (so what it forks starts in the run's namespaces).
    pub(crate) fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> std::io::Result<R> {
        self.spawner.run(f)
    }

    /// The proxy's port on 127.0.0.1 inside the namespace, when the job lists hosts.
    pub fn proxy_port(&self) -> Option<u16> {
        self.proxy.as_ref().map(|p| p.port)
    }

    /// The proxy's log of refused requests.
    pub(crate) fn refusals(&self) -> Option<Arc<Refusals>> {
        self.proxy.as_ref().map(|p| Arc::clone(&p.refusals))
    }
}

/// Move the calling thread into new IPC and UTS namespaces and, when `isolate`, into a new
/// network namespace that has only a loopback device, up.
fn enter(isolate: bool) -> Result<(), SandboxError> {
    let mut flags = CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    if isolate {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(os("cannot make the run's namespaces"))?;
    nix::unistd::sethostname("cn-run-sandbox").map_err(os("sethostname"))?;
    if isolate {
        super::loopback::up()?;
    }
    Ok(())
}

/// The proxy's listening socket on 127.0.0.1 in the current (new) network namespace.
fn bind(listen: bool) -> Result<Option<std::net::TcpListener>, SandboxError> {
    if !listen {
        return Ok(None);
    }
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .map(Some)
        .map_err(os("cannot listen for the proxy"))
}
