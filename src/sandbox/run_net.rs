//! One network, IPC and UTS namespace for all the contained commands of a run, made once
//! when the run starts instead of once per command (a new network namespace per command
//! was the largest part of bubblewrap's cost per call), and the home of the egress proxy's
//! listening socket.
//!
//! How, without `unsafe`: namespaces belong to threads, and a child process starts in the
//! namespaces of the thread that forks it. A thread of cn-run's own ("spawner") leaves
//! cn-run's network namespace for a new one (with its loopback up: bubblewrap makes it, in a
//! short-lived holder, and the thread joins it by `setns`), makes new IPC and UTS namespaces,
//! binds the proxy's socket there when the job lists hosts, and from then on forks every
//! bubblewrap of the run. bubblewrap's `--die-with-parent` follows that thread, which lives
//! as long as the run's policy: when cn-run dies (even by SIGKILL), every command dies too.
//! The proxy itself runs on a thread started from cn-run's own namespace, so it connects out.
//!
//! Joining a namespace needs `CAP_SYS_ADMIN` (cn-run as root, as in most CI containers);
//! without it [`RunNet::new`] fails and each command gets namespaces of its own as before.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use nix::sched::{CloneFlags, setns, unshare};

use super::error::{SandboxError, os};
use super::hosts::HostRule;
use super::proxy::{self, Proxy, Refusals};
use super::spawner::Spawner;

/// The run's shared namespaces and, with a host list, its proxy.
#[derive(Debug)]
pub struct RunNet {
    spawner: Spawner,
    proxy: Option<Proxy>,
}

impl RunNet {
    /// Make the namespaces with `bwrap` (a new network namespace only when `isolate`, i.e.
    /// the job does not allow the network); start the proxy for `hosts` when there are any.
    pub(crate) fn new(
        bwrap: &Path,
        hosts: &[HostRule],
        isolate: bool,
    ) -> Result<RunNet, SandboxError> {
        let bwrap = bwrap.to_path_buf();
        let listen = !hosts.is_empty();
        let (spawner, listener) = Spawner::start("cn-run-sandbox-net", move || {
            enter(&bwrap, isolate).and_then(|()| bind(listen))
        })?;
        let proxy = match listener {
            Some(l) => Some(proxy::start(proxy::ProxyListener::Tcp(l), hosts.to_vec())?),
            None => None,
        };
        Ok(RunNet { spawner, proxy })
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
fn enter(bwrap: &Path, isolate: bool) -> Result<(), SandboxError> {
    unshare(CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS)
        .map_err(os("cannot make IPC and UTS namespaces"))?;
    nix::unistd::sethostname("cn-run-sandbox").map_err(os("sethostname"))?;
    if !isolate {
        return Ok(());
    }
    let mut holder = Command::new(bwrap)
        .args(["--unshare-net", "--die-with-parent", "--ro-bind", "/", "/"])
        // The command runs once bubblewrap has set the namespace up (its loopback too) and
        // says its pid (no PID namespace here: the host's pid).
        .args(["--", "sh", "-c", "echo $$; exec sleep 60"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| SandboxError::Start {
            program: "bubblewrap",
            source,
        })?;
    let joined = holder_pid(&mut holder).and_then(|pid| {
        let ns = std::fs::File::open(format!("/proc/{pid}/ns/net"))
            .map_err(os("cannot open the new network namespace"))?;
        setns(&ns, CloneFlags::CLONE_NEWNET).map_err(os("cannot join the new network namespace"))
    });
    let _ = holder.kill();
    let _ = holder.wait();
    joined
}

/// The pid the holder's command says, once it runs.
fn holder_pid(holder: &mut std::process::Child) -> Result<u32, SandboxError> {
    let out = (holder.stdout.take())
        .ok_or_else(|| SandboxError::Bubblewrap("gave no pipe".to_owned()))?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line)
        .map_err(os("cannot read bubblewrap's stdout"))?;
    line.trim()
        .parse()
        .map_err(|_| SandboxError::Bubblewrap("could not make a network namespace".to_owned()))
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
