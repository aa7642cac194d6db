//! One bubblewrap per run, entered by each command: the speed half of issue 16.
//!
//! Starting bubblewrap costs about 6 ms per command on this kind of machine, most of it in
//! the kernel (the lazy unmount of the old root after `pivot_root` waits for an RCU grace
//! period). So where cn-run may join namespaces (root, with the run's shared namespaces of
//! [`super::run_net`]), it starts one bubblewrap per run with the run's profile, holding the
//! per-call supervisor in `--hold` mode as the sandbox's PID 1 (the "holder"; bubblewrap
//! itself starts under the holder's guard, [`super::guard`]), and a thread
//! of its own ([`super::spawner`]) joins the holder's mount and PID namespaces (`setns`;
//! network, IPC and UTS it shares already), then drops every capability and group and puts
//! the socket filter on itself. Every command of the run is started from that thread, so it
//! starts inside, with nothing to drop: the same read-only `/`, workspace, private `/tmp`,
//! covered credential files, `/dev`, `/proc` and network. It starts as
//! `/dev/cn-run-call … -- bash -c COMMAND`: the per-call supervisor ([`super::call`]),
//! bound from the file opened at start ([`super::pin`]), which makes itself the reaper of
//! what the command leaves behind, so everything a call starts still ends with the call.
//!
//! What differs from a bubblewrap per command, on purpose: the commands of one run share one
//! PID namespace and `/proc`, so a command sees the other commands of its run (never cn-run
//! or the host's processes); a command that kills its own supervisor can leave processes
//! running until the run ends (never after: the holder's PID namespace ends with the run).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use nix::sched::{CloneFlags, setns, unshare};

use super::RunCgroup;
use super::error::{SandboxError, os};
use super::spawner::Spawner;

/// The hidden subcommand of cn-run that runs the per-call supervisor when the small binary
/// is not beside it (slower: cn-run is a large binary to start per command).
pub const CALL_SUBCOMMAND: &str = "__sandbox-call";
/// The per-call supervisor's own binary, looked for beside cn-run.
pub const CALL_BINARY: &str = "cn-run-call";

/// The run's holder and the thread that has joined it.
#[derive(Debug)]
pub struct RunBox {
    /// The holder's guard ([`super::guard`]), bubblewrap's parent.
    guard: Mutex<Child>,
    /// The write end of the holder's lifeline ([`Lifeline`]): closed when the run's box is
    /// dropped or cn-run dies, however, and the holder and its guard then end.
    lifeline: Option<Lifeline>,
    spawner: Spawner,
    /// Whether the run's PID namespace bounds the number of processes
    /// ([`super::pid_bound`]), or why not; `None`: not asked (a cgroup binds them).
    pid_bound: Option<Result<(), String>>,
}

impl RunBox {
    /// Start the holder (`GUARD -- bwrap PROFILE -- SUPERVISOR --hold`: the run's PID 1,
    /// under its guard; `guard` is the guard's command line with `--guard`) from a new
    /// thread, which then joins its mount and PID namespaces and gives up, for itself and
    /// all it starts, every capability and group and the right to make Unix sockets. Call
    /// it on the run's namespace thread: the new thread inherits its network, IPC and UTS
    /// namespaces. `hold` is the supervisor's command line with `--hold`; `bound`, the
    /// host command line (`… --pid-max N`) that bounds the run's PID namespace; `cgroup`,
    /// the run's cgroup with the threads to move into it besides the new one. The guard
    /// moves them while bubblewrap sets the holder up, so the two waits overlap (each waits
    /// for an RCU grace period), before the new thread starts anything, and in a process of
    /// its own: a thread of cn-run's in that wait held up cn-run's exit by as long (a run
    /// that starts no command can end just then).
    pub(crate) fn start(
        bwrap: &Path,
        profile: Vec<OsString>,
        hold: Vec<OsString>,
        bound: Option<Vec<OsString>>,
        cgroup: Option<(Arc<RunCgroup>, Vec<i32>)>,
        mut guard: Vec<OsString>,
    ) -> Result<RunBox, SandboxError> {
        let bwrap = bwrap.to_path_buf();
        let (spawner, (guard, lifeline, pid_bound)) =
            Spawner::start("cn-run-sandbox-box", move || {
                let cgroup = cgroup.map(|(cgroup, mut tids)| {
                    tids.push(rustix::thread::gettid().as_raw_nonzero().get());
                    for tid in &tids {
                        guard.extend(["--join-tid".into(), tid.to_string().into()]);
                    }
                    (cgroup, tids)
                });
                let (mut guard, lifeline) = start_holder(&guard, &bwrap, profile, hold)?;
                let mut pid_bound = None;
                let entered = holder_pid(&mut guard).and_then(|pid| {
                    // The guard has closed its end of the info pipe: it has moved them.
                    if let Some((cgroup, tids)) = &cgroup {
                        cgroup.joined(tids);
                    }
                    let (pid_ns, mnt_ns) = (open_ns(pid, "pid")?, open_ns(pid, "mnt")?);
                    setns(&pid_ns, CloneFlags::CLONE_NEWPID)
                        .map_err(os("cannot join the sandbox's PID namespace"))?;
                    if let Some(argv) = bound {
                        pid_bound = Some(bound_pids(&argv));
                    }
                    enter_mounts(&mnt_ns)?;
                    lock_thread()
                });
                match entered {
                    Ok(()) => Ok((guard, lifeline, pid_bound)),
                    Err(why) => {
                        drop(lifeline);
                        let _ = guard.wait();
                        Err(why)
                    }
                }
            })?;
        Ok(RunBox {
            guard: Mutex::new(guard),
            lifeline: Some(lifeline),
            spawner,
            pid_bound,
        })
    }

    /// Whether the run's PID namespace bounds its processes, or why not.
    pub(crate) fn pid_bound(&self) -> Option<&Result<(), String>> {
        self.pid_bound.as_ref()
    }

    /// The thread inside (what it forks starts in the holder's namespaces).
    pub(crate) fn spawner(&self) -> &Spawner {
        &self.spawner
    }
}

/// What the thread inside gives up before it starts anything: what it starts (the per-call
/// supervisor first) never holds a capability, a group, or a way to make a Unix socket.
fn lock_thread() -> Result<(), SandboxError> {
    super::call::drop_thread_privileges()?;
    super::seccomp::apply()
}

/// The holder's lifeline: a pipe whose read end the holder and its guard watch (`--lifeline
/// FD`) and whose only write end cn-run keeps (close-on-exec: no child inherits it). When it
/// closes — the run's box dropped, cn-run ended by any signal, or cn-run gone before the
/// holder even started — the holder reads end-of-file and exits, and its PID namespace with
/// it, and the guard kills whatever is left of its bubblewrap (one still starting too).
/// bubblewrap's `--die-with-parent` alone left holders behind (parent pid 1, seen over
/// full test runs): the holder sets its parent-death signal only just before it executes,
/// so when bubblewrap's first process died during the holder's set-up (cn-run ending while
/// its sandbox was still being set up), the holder's parent was already init and it held
/// forever.
#[derive(Debug)]
pub(crate) struct Lifeline {
    _write_end: std::io::PipeWriter,
}

/// Start `GUARD --lifeline FD -- bwrap PROFILE --info-fd 1 -- HOLD --lifeline FD`.
pub(crate) fn start_holder(
    guard: &[OsString],
    bwrap: &Path,
    profile: Vec<OsString>,
    mut hold: Vec<OsString>,
) -> Result<(Child, Lifeline), SandboxError> {
    use std::os::fd::{AsFd, AsRawFd};
    let (reader, writer) = std::io::pipe().map_err(os("cannot make the holder's lifeline"))?;
    super::pin::inheritable(reader.as_fd())?;
    let lifeline: [OsString; 2] = ["--lifeline".into(), reader.as_raw_fd().to_string().into()];
    hold.extend(lifeline.clone());
    let (program, guard_args) = guard.split_first().ok_or(SandboxError::Bubblewrap(
        "no guard to start it under".to_owned(),
    ))?;
    let child = Command::new(program)
        .args(guard_args)
        .args(lifeline)
        .arg("--")
        .arg(bwrap)
        .args(profile)
        .args(["--info-fd", "1", "--"])
        .args(hold)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SandboxError::Start {
            program: "bubblewrap",
            source,
        })?;
    drop(reader);
    Ok((child, Lifeline { _write_end: writer }))
}

fn open_ns(pid: u32, ns: &str) -> Result<std::fs::File, SandboxError> {
    std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))
        .map_err(os(format!("cannot open the sandbox's {ns} namespace")))
}

/// Join the holder's mount namespace (after its PID namespace, for the children); the
/// thread first stops sharing its filesystem attributes with cn-run's other threads, as
/// joining a mount namespace requires.
fn enter_mounts(mnt_ns: &std::fs::File) -> Result<(), SandboxError> {
    unshare(CloneFlags::CLONE_FS).map_err(os("unshare(CLONE_FS)"))?;
    setns(mnt_ns, CloneFlags::CLONE_NEWNS).map_err(os("cannot join the sandbox's mount namespace"))
}

/// Run `argv` (the supervisor's `--pid-max`) from this thread, which has joined the run's
/// PID namespace but still sees the host's `/proc`: the process it starts lives in the run's
/// namespace, so its `/proc/sys/kernel/pid_max` is the namespace's. The host's must not
/// change (an older kernel has one for the machine): if it did, it is put back.
fn bound_pids(argv: &[OsString]) -> Result<(), String> {
    if !super::pid_bound::namespaced() {
        return Err(
            "this kernel has one pid_max for the machine (per namespace since \
                    Linux 6.14)"
                .to_owned(),
        );
    }
    let (program, args) = argv.split_first().ok_or("no program")?;
    let before = super::pid_bound::host_pid_max();
    let out = Command::new(program)
        .args(args)
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start the supervisor: {e}"))?;
    let after = super::pid_bound::host_pid_max();
    if before != after {
        if let Some(v) = before {
            let _ = std::fs::write("/proc/sys/kernel/pid_max", v.to_string());
        }
        return Err("the machine's pid_max changed; put back".to_owned());
    }
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
    }
}

impl Drop for RunBox {
    /// The lifeline closes: the holder exits, and the guard ends what is left and exits.
    fn drop(&mut self) {
        drop(self.lifeline.take());
        let guard = self
            .guard
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = guard.wait();
    }
}

/// bubblewrap's `child-pid` (from `--info-fd 1`), once the holder's command has said it runs
/// (so the mounts are in place before anything joins them).
fn holder_pid(holder: &mut Child) -> Result<u32, SandboxError> {
    let mut ready = String::new();
    let no_pipe = || SandboxError::Bubblewrap("gave no pipe".to_owned());
    let err = holder.stderr.take().ok_or_else(no_pipe)?;
    BufReader::new(err)
        .read_line(&mut ready)
        .map_err(os("cannot read bubblewrap's stderr"))?;
    if ready.trim() != "ready" {
        return Err(SandboxError::Bubblewrap(format!(
            "did not start: {}",
            ready.trim()
        )));
    }
    let mut info = String::new();
    holder
        .stdout
        .take()
        .ok_or_else(no_pipe)?
        .read_to_string(&mut info)
        .map_err(os("cannot read bubblewrap's info"))?;
    let v: serde_json::Value = serde_json::from_str(&info)
        .map_err(|e| SandboxError::Bubblewrap(format!("info is not JSON: {e}")))?;
    v["child-pid"]
        .as_u64()
        .and_then(|p| u32::try_from(p).ok())
        .ok_or_else(|| SandboxError::Bubblewrap(format!("info has no child-pid: {info}")))
}
