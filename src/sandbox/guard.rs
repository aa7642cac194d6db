//! The guard of the run's one bubblewrap (issue 29): `cn-run-call --guard --run-pid PID
//! --lifeline FD [--cgroup-dir DIR]… -- bwrap …` starts the holder's bubblewrap as its
//! child and, when the run ends however it ends, kills every process below it.
//!
//! Why a process of its own: bubblewrap's first process clones the sandbox's first process,
//! which then waits on an eventfd it holds itself until its parent has written `--info-fd`
//! and set its own parent-death signal. Should that parent die before it writes the eventfd
//! — cn-run killed while the holder starts, so the info meets a pipe nobody reads (SIGPIPE);
//! its parent-death signal firing in between; Ctrl-C or a CI's signal to the process group —
//! the child waits forever, parent 1, before the holder's lifeline or bubblewrap's
//! `--die-with-parent` can act, and nothing of cn-run is left to end it. The guard is the
//! child subreaper of all of it, so that child comes back to it; it watches the lifeline
//! (closed when cn-run drops the run's sandbox or dies by any signal), cn-run itself and
//! bubblewrap, and when any of them ends it kills everything below it (as the per-call
//! supervisor does, waiting 100 ms at most for them to end: a PID namespace's init waits
//! for its last processes to be reaped, by init when cn-run was their parent) and exits. When cn-run is dead by then it also removes the run's
//! cgroup folders: a run that ends while its sandbox is still being set up does not wait
//! for it ([`super::Deferred`]), so its process may end before the set-up could remove them.
//!
//! Why not the run's cgroup: putting bubblewrap into it before it executes needs code
//! between `fork` and `exec` (`pre_exec`, `unsafe`, which the crate denies) or `clone3`'s
//! `CLONE_INTO_CGROUP` (cgroup v2; this kind of machine has v1, without `cgroup.kill`),
//! there is no cgroup as an ordinary user, and a sweep by the next run leaves the process
//! alive until a next run, which CI may never start. The guard works as any user, at once.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use nix::sys::signal::{SigSet, Signal};
use rustix::event::{PollFd, PollFlags};
use rustix::process::{Pid, PidfdFlags};

/// What the guard is told: cn-run's pid, the lifeline's read end, the folders to remove.
#[derive(Debug, Default)]
pub(super) struct Told {
    pub(super) run_pid: Option<i32>,
    pub(super) lifeline: Option<i32>,
    pub(super) cgroup_dirs: Vec<PathBuf>,
    /// Threads of cn-run to move into the run's cgroup folders
    /// ([`super::cgroup::move_threads`]).
    pub(super) join_tids: Vec<i32>,
}

/// Guard `argv` (bubblewrap and its arguments); returns the exit code.
pub(super) fn guard(told: &Told, argv: &[OsString]) -> i32 {
    match watch(told, argv) {
        Ok(()) => 0,
        Err(why) => {
            say(&why);
            1
        }
    }
}

fn watch(told: &Told, argv: &[OsString]) -> Result<(), String> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(|e| format!("cannot become the subreaper: {e}"))?;
    // A signal to cn-run's process group leaves the guard to finish its work (held blocked;
    // bubblewrap starts with none blocked).
    let mut stops = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        stops.add(s);
    }
    stops
        .thread_block()
        .map_err(|e| format!("cannot block signals: {e}"))?;
    let lifeline = open_lifeline(told.lifeline)?;
    let Some(run) = open_run(told.run_pid)? else {
        remove_dirs(&told.cgroup_dirs);
        return Ok(());
    };
    if lifeline_closed(&lifeline) {
        return Ok(());
    }
    let (program, rest) = argv.split_first().ok_or("no command given after --")?;
    let child = super::call::start(program, rest)
        .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
    let child = rustix::process::pidfd_open(child, PidfdFlags::empty());
    super::cgroup::move_threads(&told.cgroup_dirs, &told.join_tids);
    // Only bubblewrap writes cn-run's pipes (its info, the holder's `ready`): cn-run reads
    // the info to its end, which it sees only once no copy is left open here, so once the
    // threads have moved.
    let null = std::fs::File::options().write(true).open("/dev/null");
    if let Ok(null) = &null {
        let _ = rustix::stdio::dup2_stdout(null);
        let _ = rustix::stdio::dup2_stderr(null);
    }
    if let Ok(child) = &child {
        wait_for_an_end(&lifeline, child, &run);
    }
    super::call::kill_everything_below(Some(std::time::Duration::from_millis(100)));
    if ended_now(&run) {
        remove_dirs(&told.cgroup_dirs);
    }
    Ok(())
}

/// A pidfd of cn-run, or `None` when it is gone already (this process is no longer its
/// child).
fn open_run(run_pid: Option<i32>) -> Result<Option<OwnedFd>, String> {
    let pid = run_pid
        .and_then(Pid::from_raw)
        .ok_or("--guard needs --run-pid")?;
    if rustix::process::getppid() != Some(pid) {
        return Ok(None);
    }
    rustix::process::pidfd_open(pid, PidfdFlags::empty())
        .map(Some)
        .map_err(|e| format!("cannot watch cn-run: {e}"))
}

/// The lifeline's read end (see [`super::call::open_lifeline`]).
fn open_lifeline(fd: Option<i32>) -> Result<OwnedFd, String> {
    let fd = fd.ok_or("--guard needs --lifeline")?;
    super::call::open_lifeline(fd).map_err(|e| format!("cannot open the lifeline: {e}"))
}

/// Whether cn-run has ended (its pidfd is readable), without waiting.
fn ended_now(run: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(run, PollFlags::IN)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
}

/// Wait until the lifeline closes, cn-run ends or bubblewrap ends.
fn wait_for_an_end(lifeline: &OwnedFd, child: &OwnedFd, run: &OwnedFd) {
    loop {
        let mut fds = [
            PollFd::new(lifeline, PollFlags::IN),
            PollFd::new(child, PollFlags::IN),
            PollFd::new(run, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
            Ok(_) => {}
        }
        if fds[1..].iter().any(|f| !f.revents().is_empty()) {
            return;
        }
        if !fds[0].revents().is_empty() && lifeline_closed(lifeline) {
            return;
        }
    }
}

/// Read what is in the lifeline (cn-run writes nothing); true at its end.
fn lifeline_closed(lifeline: &OwnedFd) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match rustix::io::read(lifeline, &mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::AGAIN) => return false,
            Err(_) => return true,
        }
    }
}

/// Remove the run's cgroup folders once the processes just killed have left them (up to
/// 100 ms each: one whose processes wait for init to reap them stays, for the next run's
/// sweep).
fn remove_dirs(dirs: &[PathBuf]) {
    for dir in dirs {
        super::cgroup::remove_when_empty(dir, 100);
    }
}

fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "cn-run sandbox guard: {message}");
}
