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
//! it the run's PID 1 instead, and `--report` prints what a command would get
//! ([`super::report`]).

use std::io::Write;
use std::process::Command;

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
    /// Print what a command would get ([`super::report`]) instead of running one.
    report: bool,
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
            "--relay" => o.relay = Some(value()?.clone()),
            "--rlimit" => o.rlimits.push(value()?.to_string_lossy().into_owned()),
            "--cgroup-fd" => o.cgroup_fds.push(
                value()?
                    .to_str()
                    .and_then(|v| v.parse().ok())
                    .ok_or("bad --cgroup-fd")?,
            ),
            other => return Err(format!("unknown option {other}")),
        }
        i += if matches!(flag, "--hold" | "--report") {
            1
        } else {
            2
        };
    }
    Ok((o, &args[args.len().min(i)..]))
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
    if !options.hold && !options.report && argv.is_empty() {
        say("no command given after --");
        return EXEC_FAILED_EXIT;
    }
    if let Err(why) = lock_down(&options) {
        say(&format!("refusing to run the command: {why}"));
        return EXEC_FAILED_EXIT;
    }
    if options.hold {
        hold();
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
    // std resets the signal mask in the child before it runs the program.
    let child = match Command::new(program).args(rest).spawn() {
        Ok(c) => c,
        Err(e) => {
            say(&format!("cannot run {}: {e}", program.to_string_lossy()));
            return EXEC_FAILED_EXIT;
        }
    };
    let main = Pid::from_child(&child);
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

/// Everything a command must not have, in order: the run's cgroup joined, no capability or
/// group, the resource limits, the relay (its thread outside the filter), then the socket
/// filter on this thread.
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
    super::seccomp::apply().map_err(|e| e.to_string())
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

/// The run's PID 1: reap whatever ends, forever (it ends with the run's sandbox).
fn hold() -> ! {
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let _ = chld.thread_block();
    say_ready();
    loop {
        while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
        let _ = chld.wait();
    }
}

fn say_ready() {
    let _ = writeln!(std::io::stderr(), "ready");
}

/// How the call ended: the command's own status, or a signal cn-run sent the supervisor.
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

/// Kill what is left (it all comes back to the subreaper, one generation at a time) until
/// nothing is; how many it killed.
fn kill_everything_left() -> usize {
    let mut killed = 0;
    loop {
        while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
        let children = own_children();
        if children.is_empty() {
            return killed;
        }
        killed += children.len();
        for pid in &children {
            let _ = rustix::process::kill_process(*pid, rustix::process::Signal::KILL);
        }
        // Reap what died; its children have come back to us for the next round.
        for _ in &children {
            let _ = rustix::process::wait(WaitOptions::empty());
        }
    }
}

/// The processes whose parent is this one (a scan of `/proc`: the run's PID namespace is
/// small).
fn own_children() -> Vec<Pid> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(me))
        .filter_map(Pid::from_raw)
        .collect()
}

/// The parent pid in `/proc/PID/stat` (the field after the `)` that closes the name).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
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
