//! The per-call supervisor: every contained command starts as
//! `cn-run-call [OPTIONS] -- PROGRAM ARGS` (or cn-run's `__sandbox-call`), inside the run's
//! one sandbox or a bubblewrap of the command's own, from the binary pinned at start
//! ([`super::pin`]).
//!
//! It joins the run's cgroup (`--cgroup-fd`), drops every capability and supplementary
//! group and sets `no_new_privs` (it normally starts without them already), sets the
//! resource limits (`--rlimit`), starts the proxy relay (`--relay`), then puts the socket
//! filter ([`super::seccomp`]) on itself; the command inherits all of it. It makes itself
//! the child subreaper, so whatever the command leaves behind (`setsid`, `nohup`, a double
//! fork) comes back to it; and when the command ends — or cn-run asks with SIGTERM (timeout,
//! cancel) — it kills all of that before it exits with the command's status. `--hold` makes
//! it the run's PID 1 instead, `--report` prints what a command would get
//! ([`super::report`]), and `--guard` guards the run's bubblewrap on the host
//! ([`super::guard`]).

use std::io::Write;

use nix::sys::signal::{SigSet, Signal};
use rustix::process::{Pid, WaitOptions};

/// Exit code when the program cannot be started.
const EXEC_FAILED_EXIT: i32 = 127;

/// The supervisor's options (before `--`).
#[derive(Debug, Default)]
struct Options {
    relay: Option<std::ffi::OsString>,
    rlimits: Vec<String>,
    cgroup_fds: Vec<i32>,
    /// Hold the run's sandbox (its PID 1) instead of running a command.
    hold: bool,
    /// With `hold`: the read end of the lifeline cn-run keeps open ([`super::entry`]);
    /// the holder ends when it reads end-of-file.
    lifeline: Option<i32>,
    /// Print what a command would get ([`super::report`]) instead of running one.
    report: bool,
    /// Guard the run's bubblewrap instead ([`super::guard`]), on the host.
    guard: bool,
    /// With `guard`: cn-run's pid and the run's cgroup folders (and `lifeline`).
    told: super::guard::Told,
    /// Bound the PID namespace it starts in to this many processes and exit
    /// ([`super::pid_bound`]; cn-run starts it so, with its capabilities, before any
    /// command).
    pid_max: Option<String>,
    /// PID 1 of a command's own bubblewrap: bound this namespace to this many processes
    /// first ([`super::pid_bound::bound_own_namespace`]).
    own_pid_max: Option<String>,
    /// With `--pid-max` or `--own-pid-max`: bound the IPC namespace's SysV shared memory
    /// and message queues to this many bytes ([`super::pid_bound::bound_ipc`]).
    ipc_max: Option<String>,
}

fn parse(args: &[std::ffi::OsString]) -> Result<(Options, &[std::ffi::OsString]), String> {
    let mut o = Options::default();
    let mut i = 0;
    while let Some(flag) = args.get(i).and_then(|a| a.to_str()) {
        let value = || args.get(i + 1).ok_or(format!("{flag} needs a value"));
        match flag {
            "--" => return Ok((o, &args[i + 1..])),
            "--hold" => o.hold = true,
            "--report" => o.report = true,
            "--guard" => o.guard = true,
            "--run-pid" => o.told.run_pid = Some(fd_value(value()?, flag)?),
            "--cgroup-dir" => o.told.cgroup_dirs.push(value()?.into()),
            "--join-tid" => o.told.join_tids.push(fd_value(value()?, flag)?),
            "--relay" => o.relay = Some(value()?.clone()),
            "--rlimit" => o.rlimits.push(value()?.to_string_lossy().into_owned()),
            "--pid-max" => o.pid_max = Some(value()?.to_string_lossy().into_owned()),
            "--ipc-max" => o.ipc_max = Some(value()?.to_string_lossy().into_owned()),
            "--own-pid-max" => o.own_pid_max = Some(value()?.to_string_lossy().into_owned()),
            "--lifeline" => o.lifeline = Some(fd_value(value()?, flag)?),
            "--cgroup-fd" => o.cgroup_fds.push(fd_value(value()?, flag)?),
            other => return Err(format!("unknown option {other}")),
        }
        i += if matches!(flag, "--hold" | "--report" | "--guard") {
            1
        } else {
            2
        };
    }
    Ok((o, &args[args.len().min(i)..]))
}

/// A descriptor number given after `flag`.
fn fd_value(value: &std::ffi::OsStr, flag: &str) -> Result<i32, String> {
    value
        .to_str()
        .and_then(|v| v.parse().ok())
        .ok_or(format!("bad {flag}"))
}

/// Run `args` (`[OPTIONS] -- PROGRAM ARGS…`) supervised; returns the exit code to use (or
/// does not return: a command killed by a signal is mirrored by the same signal).
pub fn call_main(args: &[std::ffi::OsString]) -> i32 {
    let (options, argv) = match parse(args) {
        Ok(parsed) => parsed,
        Err(why) => {
            say(&why);
            return EXEC_FAILED_EXIT;
        }
    };
    if let Some(processes) = &options.pid_max {
        let ipc = options.ipc_max.as_deref();
        return match super::pid_bound::apply_here(processes)
            .and_then(|()| ipc.map_or(Ok(()), super::pid_bound::bound_ipc))
        {
            Ok(()) => 0,
            Err(why) => {
                say(&why);
                1
            }
        };
    }
    if options.guard {
        let told = super::guard::Told {
            lifeline: options.lifeline,
            ..options.told
        };
        return super::guard::guard(&told, argv);
    }
    if !options.hold && !options.report && argv.is_empty() {
        say("no command given after --");
        return EXEC_FAILED_EXIT;
    }
    if let Some(processes) = &options.own_pid_max
        && let Err(why) =
            super::pid_bound::bound_own_namespace(processes, options.ipc_max.as_deref())
    {
        say(&format!(
            "refusing to run the command: processes cannot be bounded: {why}"
        ));
        return EXEC_FAILED_EXIT;
    }
    if let Err(why) = lock_down(&options) {
        say(&format!("refusing to run the command: {why}"));
        return EXEC_FAILED_EXIT;
    }
    if options.hold {
        hold(options.lifeline);
    }
    if options.report {
        let json = serde_json::to_string(&super::report::collect()).unwrap_or_default();
        let _ = writeln!(std::io::stdout(), "{json}");
        return 0;
    }
    let Some((program, rest)) = argv.split_first() else {
        say("no command given after --");
        return EXEC_FAILED_EXIT;
    };
    let signals = watched_signals();
    if let Err(e) = signals.thread_block() {
        say(&format!("cannot block signals: {e}"));
        return EXEC_FAILED_EXIT;
    }
    let main = match start(program, rest) {
        Ok(pid) => pid,
        Err(e) => {
            say(&format!("cannot run {}: {e}", program.to_string_lossy()));
            return EXEC_FAILED_EXIT;
        }
    };
    let ended = supervise(main, &signals);
    let left = kill_everything_left();
    if left > 0 && matches!(ended, Ended::Status(_)) {
        say(&format!(
            "the command left {left} process(es) running; they were stopped when it ended \
             (for a server or a long job, use run_in_background)"
        ));
    }
    mirror(ended, &signals)
}

/// Start the command with an empty signal mask and SIGPIPE at its default: this thread
/// blocks the signals it waits for, and a child inherits the mask (std's `Command` does not
/// reset it). A command that inherited SIGTERM blocked never died of `timeout` (`timeout 3
/// perl -e 'fork while 1'` ran until the call's own timeout: perl restores the mask it
/// started with after each `fork`).
pub(super) fn start(program: &std::ffi::OsStr, rest: &[std::ffi::OsString]) -> Result<Pid, String> {
    use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags, posix_spawnp};
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |bytes: &[u8]| CString::new(bytes).map_err(|e| e.to_string());
    let argv: Vec<CString> = std::iter::once(program)
        .chain(rest.iter().map(|a| a.as_os_str()))
        .map(|a| c(a.as_bytes()))
        .collect::<Result<_, _>>()?;
    let envp: Vec<CString> = std::env::vars_os()
        .map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
        .collect::<Result<_, _>>()?;
    let mut pipe = SigSet::empty();
    pipe.add(Signal::SIGPIPE);
    let mut attr = PosixSpawnAttr::init().map_err(|e| e.to_string())?;
    attr.set_sigmask(&SigSet::empty())
        .map_err(|e| e.to_string())?;
    attr.set_sigdefault(&pipe).map_err(|e| e.to_string())?;
    attr.set_flags(
        PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
    )
    .map_err(|e| e.to_string())?;
    let actions = PosixSpawnFileActions::init().map_err(|e| e.to_string())?;
    let program = c(program.as_bytes())?;
    let pid = posix_spawnp(&program, &actions, &attr, &argv, &envp).map_err(|e| e.to_string())?;
    Pid::from_raw(pid.as_raw()).ok_or_else(|| "no process".to_owned())
}

/// Everything a command must not have, in order: the run's cgroup joined, no capability or
/// group, the resource limits, the relay (its thread outside the filter), then the socket
/// filter on this thread, and where memory is bounded per process (no cgroup) no
/// `memfd_create`.
fn lock_down(o: &Options) -> Result<(), String> {
    for fd in &o.cgroup_fds {
        join_cgroup(*fd)?;
    }
    drop_privileges().map_err(|e| e.to_string())?;
    for spec in &o.rlimits {
        super::limits::apply_rlimit(spec)?;
    }
    if let Some(socket) = &o.relay {
        super::relay::serve_inside(socket.into()).map_err(|e| e.to_string())?;
    }
    super::seccomp::apply().map_err(|e| e.to_string())?;
    if o.rlimits.iter().any(|r| r.starts_with("data=")) {
        super::seccomp::apply_memory_bound().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Move this process into the cgroup whose `cgroup.procs` is open as `fd`.
fn join_cgroup(fd: i32) -> Result<(), String> {
    let path = format!("/proc/self/fd/{fd}");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot reopen the run's cgroup: {e}"))?;
    file.write_all(b"0\n")
        .map_err(|e| format!("cannot join the run's cgroup: {e}"))
}

/// The run's PID 1: reap whatever ends, until the run's sandbox ends or the lifeline
/// (when given) closes: then exit, which ends every process of the namespace.
fn hold(lifeline: Option<i32>) -> ! {
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let _ = chld.thread_block();
    // After the block: the watching thread inherits it, so SIGCHLD still reaches the wait.
    if let Some(fd) = lifeline {
        watch_lifeline(fd);
    }
    say_ready();
    loop {
        while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
        let _ = chld.wait();
    }
}

/// Exit when nothing holds the lifeline's write end any more (at once if nothing does
/// now).
fn watch_lifeline(fd: i32) {
    let Ok(end) = open_lifeline(fd) else {
        say("cannot open the lifeline: the run is gone");
        std::process::exit(1);
    };
    let _ = rustix::fs::fcntl_setfl(&end, rustix::fs::OFlags::empty());
    let watcher = std::thread::Builder::new()
        .name("lifeline".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            while let Ok(1) = rustix::io::read(&end, &mut byte) {}
            std::process::exit(0);
        });
    if watcher.is_err() {
        say("cannot watch the lifeline");
        std::process::exit(1);
    }
}

/// The lifeline's read end `fd`, reopened by its `/proc` name (no `unsafe` to adopt a
/// number), without blocking: for the holder ([`watch_lifeline`]) and its guard.
pub(super) fn open_lifeline(fd: i32) -> rustix::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rustix::fs::open(format!("/proc/self/fd/{fd}"), flags, Mode::empty())
}

fn say_ready() {
    let _ = writeln!(std::io::stderr(), "ready");
}

/// How the call ended: the command's own status, or a signal cn-run sent the supervisor.
#[derive(Clone, Copy)]
enum Ended {
    Status(rustix::process::WaitStatus),
    Asked(Signal),
}

fn watched_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
    ] {
        set.add(s);
    }
    set
}

/// Wait for the command (reaping whatever else ends meanwhile) or for a stop signal.
fn supervise(main: Pid, signals: &SigSet) -> Ended {
    loop {
        if let Some(status) = reap_until(main) {
            return Ended::Status(status);
        }
        match signals.wait() {
            Ok(Signal::SIGCHLD) | Err(_) => continue,
            Ok(other) => return Ended::Asked(other),
        }
    }
}

/// Reap every child that has ended; the status of `main` if it is among them.
fn reap_until(main: Pid) -> Option<rustix::process::WaitStatus> {
    loop {
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some((pid, status))) if pid == main => return Some(status),
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Kill what is left until nothing is; how many it killed. Every descendant at once, not
/// one generation at a time: a fork bomb that refills each freed slot (`perl -e 'fork
/// while 1'` under a process bound) outgrew a kill of the children alone and wedged the
/// run (the next command could not start). What a killed process leaves comes back to this
/// subreaper and is reaped here.
fn kill_everything_left() -> usize {
    kill_everything_below(None)
}

/// [`kill_everything_left`], but after `limit` it stops waiting: every process below has
/// been sent SIGKILL by then, and one still ending (the init of a PID namespace waits for
/// its last processes to be reaped, by init when their parent was cn-run) ends without it.
pub(super) fn kill_everything_below(limit: Option<std::time::Duration>) -> usize {
    let until = limit.map(|l| std::time::Instant::now() + l);
    let mut killed = std::collections::HashSet::new();
    loop {
        while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
        let (living, zombies) = descendants();
        let late = until.is_some_and(|u| std::time::Instant::now() > u);
        if (living.is_empty() && zombies == 0) || late {
            return killed.len();
        }
        for pid in living {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            killed.insert(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The processes whose parent is this one (a scan of `/proc`: the run's PID namespace is
/// small).
#[cfg(test)]
fn own_children() -> Vec<Pid> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    processes()
        .into_iter()
        .filter(|p| p.1 == me)
        .filter_map(|p| Pid::from_raw(p.0))
        .collect()
}

/// Every living process below this one, and how many dead ones wait to be reaped.
fn descendants() -> (Vec<Pid>, usize) {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let all = processes();
    let mut below = vec![me];
    let mut i = 0;
    while let Some(parent) = below.get(i).copied() {
        below.extend(all.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    let zombie = |pid: &i32| all.iter().any(|p| p.0 == *pid && p.2);
    let zombies = below.iter().filter(|p| zombie(p)).count();
    let living = below[1..]
        .iter()
        .filter(|p| !zombie(p))
        .filter_map(|p| Pid::from_raw(*p))
        .collect();
    (living, zombies)
}

/// (pid, parent pid, a zombie) of every process in view.
fn processes() -> Vec<(i32, i32, bool)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let (state, parent) = stat_of(pid)?;
            Some((pid, parent, state == "Z"))
        })
        .collect()
}

/// The state and parent pid in `/proc/PID/stat` (the fields after the `)` that closes the
/// name).
fn stat_of(pid: i32) -> Option<(String, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut after = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = after.next()?.to_owned();
    Some((state, after.next()?.parse().ok()?))
}

#[cfg(test)]
fn parent_of(pid: i32) -> Option<i32> {
    stat_of(pid).map(|s| s.1)
}

/// Exit as the command did: its code, or the signal that killed it (or the one cn-run sent).
fn mirror(ended: Ended, signals: &SigSet) -> i32 {
    let signal = match ended {
        Ended::Status(s) => match (s.exit_status(), s.terminating_signal()) {
            (Some(code), _) => return code,
            (None, Some(sig)) => Signal::try_from(sig).unwrap_or(Signal::SIGKILL),
            (None, None) => return 1,
        },
        Ended::Asked(sig) => sig,
    };
    let _ = signals.thread_unblock();
    let _ = nix::sys::signal::raise(signal);
    let _ = nix::sys::signal::raise(Signal::SIGKILL);
    128 + signal as i32
}

/// Not ptrace-able, the reaper of everything the command starts, and no capability.
fn drop_privileges() -> Result<(), super::SandboxError> {
    use super::error::os;
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(os("cannot become the subreaper"))?;
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(os("cannot stop being dumpable"))?;
    drop_thread_privileges()
}

/// For the calling thread and what it starts: no supplementary group, no capability (the
/// bounding set included, where the thread may still drop it), no way to gain any
/// (`no_new_privs`).
pub(crate) fn drop_thread_privileges() -> Result<(), super::SandboxError> {
    use super::error::os;
    use rustix::thread::{CapabilitySet, CapabilitySets};
    // Possible only with CAP_SETGID (root); an ordinary user's groups stay (the kernel does
    // not let a user namespace drop them), and the socket filter is what keeps their
    // sockets out of reach.
    let _ = rustix::thread::set_thread_groups(&[]);
    rustix::thread::set_no_new_privs(true).map_err(os("no_new_privs"))?;
    for cap in CapabilitySet::all().iter() {
        // Unknown to this kernel (EINVAL) or no CAP_SETPCAP (EPERM): with `no_new_privs`
        // and empty sets, nothing in the bounding set can be gained by an exec.
        let _ = rustix::thread::remove_capability_from_bounding_set(cap);
    }
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    rustix::thread::set_capabilities(None, none).map_err(os("cannot drop capabilities"))
}

/// A message for whoever reads the command's stderr.
fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "cn-run sandbox: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn the_parent_is_read_past_a_name_with_parentheses_and_spaces() {
        // Our own parent, as the kernel says it.
        let me = i32::try_from(std::process::id()).unwrap();
        let parent = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
        assert_eq!(parent_of(me), parent);
        // A process named `a) 1 (b` still parses: the name ends at the last `)`.
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("a) 1 (b");
        std::os::unix::fs::symlink("/bin/sleep", &odd).unwrap();
        let mut child = Command::new(&odd).arg("5").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        for _ in 0..200 {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "a) 1 (b" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(parent_of(pid), Some(me));
        assert!(
            own_children()
                .iter()
                .any(|p| p.as_raw_nonzero().get() == pid)
        );
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn without_a_program_it_says_so() {
        assert_eq!(call_main(&["--".into()]), EXEC_FAILED_EXIT);
    }
}
