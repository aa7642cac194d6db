//! The per-call supervisor inside the run's sandbox (`cn-run __sandbox-call -- PROGRAM ARGS`,
//! see [`super::entry`]): what bubblewrap's own init did per command when each command had a
//! bubblewrap of its own.
//!
//! It drops every capability (bounding set included) and sets `no_new_privs`, so a command
//! started as root has no more power than under bubblewrap; it makes itself the child
//! subreaper, so whatever the command leaves behind (`setsid`, `nohup`, a double fork) comes
//! back to it; and when the command ends — or cn-run asks with SIGTERM (timeout, cancel) — it
//! kills all of that before it exits with the command's status.

use std::process::Command;

use nix::sys::signal::{SigSet, Signal};
use rustix::process::{Pid, WaitOptions};

/// Exit code when the program cannot be started.
const EXEC_FAILED_EXIT: i32 = 127;

/// Run `args` (`[--relay SOCKET] -- PROGRAM ARGS…`) supervised; returns the exit code to use (or does not
/// return: a command killed by a signal is mirrored by the same signal).
pub fn call_main(args: &[std::ffi::OsString]) -> i32 {
    let (relay, args) = match args {
        [flag, socket, rest @ ..] if flag == "--relay" => (Some(socket), rest),
        _ => (None, args),
    };
    let argv = args.strip_prefix(&["--".into()]).unwrap_or(args);
    if let Some(socket) = relay
        && let Err(why) = super::relay::serve_inside(socket.into())
    {
        say(&why.to_string());
        return EXEC_FAILED_EXIT;
    }
    let Some((program, rest)) = argv.split_first() else {
        say("no command given after --");
        return EXEC_FAILED_EXIT;
    };
    if let Err(why) = drop_privileges() {
        say(&format!("refusing to run the command: {why}"));
        return EXEC_FAILED_EXIT;
    }
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

/// No capabilities, no way to gain any (`no_new_privs`), not ptrace-able, and the reaper of
/// everything the command starts.
fn drop_privileges() -> Result<(), super::SandboxError> {
    use super::error::os;
    use rustix::thread::{CapabilitySet, CapabilitySets};
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(os("cannot become the subreaper"))?;
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(os("cannot stop being dumpable"))?;
    rustix::thread::set_no_new_privs(true).map_err(os("no_new_privs"))?;
    for cap in CapabilitySet::all().iter() {
        // Capabilities this kernel does not know fail with EINVAL: nothing to drop.
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
