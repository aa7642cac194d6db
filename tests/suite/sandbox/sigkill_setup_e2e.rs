//! A cn-run killed while its sandbox is being set up leaves no process of its run alive
//! (issue 29). Killed while the run's one bubblewrap (the holder's) started, bubblewrap's
//! first process died before it let its child go on (the info it writes to cn-run met a pipe
//! nobody read any more), and that child waited forever on bubblewrap's start-up eventfd,
//! parent 1, before anything that ends the holder could act. The holder's guard
//! (`src/sandbox/guard.rs`) ends it now.
//!
//! Two ways in: a `bwrap` first on `PATH` that holds the holder's bubblewrap back until
//! cn-run has been killed (the case every time: before the guard each such run left that
//! child), and the real bubblewrap with cn-run killed at many moments of its set-up (0–40 ms
//! after it started, and 0–40 ms after its first child process appeared), as root and as
//! `nobody`. A process of the run is one whose command line or mounts name the scene's own
//! folder (cn-run's forks name the job, bubblewrap and the guard the workspace, the holder
//! and the commands have the workspace mounted); the control shows that a process left on
//! purpose is found so. As root the run's cgroup folders are gone too once the next run
//! has started (the guard removes them, else the next run's sweep).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available};
use crate::support::procs::alive;

/// The folder that holds the scene's workspace, job and script.
fn base(s: &Scene) -> PathBuf {
    s.ws.parent().unwrap().to_path_buf()
}

/// Living processes whose command line or mounts name `base`: (pid, command line).
fn of_the_run(base: &Path) -> Vec<(u32, String)> {
    let needle = base.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo"));
            let named = cmd.contains(&needle) || mounts.is_ok_and(|m| m.contains(&needle));
            (named && alive(pid)).then_some((pid, cmd))
        })
        .collect()
}

/// What is left of the runs of `bases` once they have had time to end (until none is seen,
/// up to 20 s, then again a second later: a fork of cn-run may still be executing); each
/// one found is killed, by its pid.
fn left_after_settling(bases: &[PathBuf]) -> Vec<(u32, String)> {
    left_after(bases, Duration::from_secs(20))
}

/// [`left_after_settling`], waiting up to `patience` for them to end.
fn left_after(bases: &[PathBuf], patience: Duration) -> Vec<(u32, String)> {
    let all = || bases.iter().flat_map(|b| of_the_run(b)).collect::<Vec<_>>();
    let give_up = Instant::now() + patience;
    while !all().is_empty() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    let left = all();
    for (pid, _) in &left {
        if let Some(pid) = Pid::from_raw(*pid as i32) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    left
}

/// A job whose first turn runs a command (so the run waits for its sandbox), or none.
fn turns(command: bool) -> Vec<Value> {
    match command {
        true => vec![json!({"tool_calls": [bash("sleep 20")]})],
        false => Vec::new(),
    }
}

/// Start the scene's cn-run on `turns`, with `path_first` first on `PATH`.
fn start(s: &Scene, turns: Vec<Value>, path_first: Option<&Path>) -> Child {
    let mut cmd = s.command(turns, "", &[]);
    if let Some(dir) = path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", dir.display()));
    }
    cmd.arg("--out")
        .arg(&s.out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().unwrap()
}

fn signal(child: &mut Child, signal: Signal) {
    let _ = rustix::process::kill_process(Pid::from_child(child), signal);
    child.wait().unwrap();
}

/// A `bwrap` in `base/bin` that, for the holder (`--hold`), says so in `base/started` and
/// runs the real one only once `base/go` exists (10 s at most): the test decides what
/// happens to cn-run before bubblewrap runs.
fn held_holder_bwrap(base: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = base.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" --hold \"*)\n  : > '{b}/started'\n  \
         for i in $(seq 1000); do [ -e '{b}/go' ] && break; sleep 0.01; done;;\nesac\n\
         exec '{real}' \"$@\"\n",
        b = base.display(),
        real = real_bwrap().display(),
    );
    let wrapper = dir.join("bwrap");
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The first `bwrap` on `PATH`.
fn real_bwrap() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap"))
}

/// Wait until `path` exists (true) or `child` has ended (false).
fn started_or_ended(path: &Path, child: &mut Child) -> bool {
    let give_up = Instant::now() + Duration::from_secs(60);
    while Instant::now() < give_up {
        if path.exists() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the holder's bubblewrap never started")
}

/// A final answer after `ms` milliseconds: a run that starts no command.
fn answer_after(ms: u64) -> Vec<Value> {
    vec![json!({"text": "done", "delay_ms": ms})]
}

#[test]
fn a_run_killed_before_its_holders_bubblewrap_runs_leaves_nothing() {
    if !user_available(User::Root) {
        return;
    }
    let cases = [
        (
            "SIGKILL, a command waiting",
            Some(Signal::KILL),
            turns(true),
        ),
        (
            "SIGKILL, no command",
            Some(Signal::KILL),
            answer_after(20_000),
        ),
        (
            "SIGTERM, a command waiting",
            Some(Signal::TERM),
            turns(true),
        ),
        (
            "SIGTERM, no command",
            Some(Signal::TERM),
            answer_after(20_000),
        ),
    ];
    let mut scenes = Vec::new();
    for round in 0..3 {
        for (name, sig, turns) in cases.clone() {
            let s = Scene::new();
            let b = base(&s);
            let mut child = start(&s, turns, Some(&held_holder_bwrap(&b)));
            if started_or_ended(&b.join("started"), &mut child) {
                std::thread::sleep(Duration::from_millis(round * 2));
            }
            signal(&mut child, sig.unwrap());
            std::fs::write(b.join("go"), "").unwrap();
            scenes.push((name, s));
        }
    }
    let bases: Vec<PathBuf> = scenes.iter().map(|(_, s)| base(s)).collect();
    let left = left_after_settling(&bases);
    assert!(
        left.is_empty(),
        "processes of killed runs outlived them (killed now): {left:?}"
    );
}

/// Issue 38's end of a run: one that starts no command ends when its answer comes, while
/// its holder's bubblewrap has not even run yet (held until the run has ended, up to 10
/// s), and leaves nothing behind.
#[test]
fn a_run_that_ends_while_its_holder_starts_does_not_wait_for_it() {
    if !user_available(User::Root) {
        return;
    }
    let mut bases = Vec::new();
    let mut waited = Vec::new();
    for _ in 0..3 {
        let s = Scene::new();
        let b = base(&s);
        let mut child = start(&s, answer_after(1500), Some(&held_holder_bwrap(&b)));
        if started_or_ended(&b.join("started"), &mut child) {
            let since = Instant::now();
            assert!(child.wait().unwrap().success());
            waited.push(since.elapsed());
        }
        std::fs::write(b.join("go"), "").unwrap();
        bases.push(b);
    }
    let left = left_after_settling(&bases);
    assert!(
        left.is_empty(),
        "processes of the runs outlived them: {left:?}"
    );
    assert!(!waited.is_empty(), "no run reached its holder's start");
    assert!(
        waited.iter().all(|w| *w < Duration::from_secs(5)),
        "the run waited for its holder's start: {waited:?}"
    );
}

#[test]
fn control_with_cn_run_alive_the_held_holder_runs_the_command() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let b = base(&s);
    let turns = vec![json!({"tool_calls": [bash("touch ran")]})];
    let mut child = start(&s, turns, Some(&held_holder_bwrap(&b)));
    assert!(started_or_ended(&b.join("started"), &mut child));
    std::fs::write(b.join("go"), "").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(b.join("started").exists(), "the slowed bwrap was not used");
    assert!(s.ws.join("ran").exists(), "the command did not run");
    let result: Value =
        serde_json::from_slice(&std::fs::read(s.out.join("result.json")).unwrap()).unwrap();
    let sandbox = result["sandbox"].to_string();
    assert!(
        !sandbox.contains("of its own"),
        "the run did not use its one sandbox: {sandbox}"
    );
    assert!(left_after_settling(&[b]).is_empty());
}

/// Whether a process other than `pid` itself is of the run of `base` (something of the
/// set-up has started).
fn set_up_started(base: &Path, pid: u32) -> bool {
    of_the_run(base).iter().any(|(p, _)| *p != pid)
}

/// Start a run of `user` with a command and kill it at many moments of its set-up; nothing
/// of any run is left; the kills fell while something of the set-up ran.
fn killed_at_many_moments(user: User) {
    let mut scenes = Vec::new();
    let mut during_set_up = 0;
    let mut moments: Vec<(bool, u64)> = (0..=40).step_by(4).map(|ms| (false, ms * 1000)).collect();
    moments.extend((0..=40).step_by(2).map(|ms| (true, ms * 1000)));
    for round in 0..2 {
        for &(after_child, us) in &moments {
            let s = Scene::for_user(user, &[]);
            let b = base(&s);
            let mut child = start(&s, turns(true), None);
            if after_child {
                let give_up = Instant::now() + Duration::from_secs(30);
                while !set_up_started(&b, child.id()) && Instant::now() < give_up {}
            }
            std::thread::sleep(Duration::from_micros(us + round * 250));
            signal(&mut child, Signal::KILL);
            during_set_up += usize::from(set_up_started(&b, child.id()));
            scenes.push((s, child.id()));
        }
    }
    let bases: Vec<PathBuf> = scenes.iter().map(|(s, _)| base(s)).collect();
    let left = left_after_settling(&bases);
    assert!(
        left.is_empty(),
        "processes of runs killed during their set-up outlived them (killed now): {left:?}"
    );
    assert!(
        during_set_up > 0,
        "no kill fell while the set-up ran: this proves nothing"
    );
    eprintln!(
        "{user:?}: {} runs killed, {during_set_up} while a process of the set-up ran",
        bases.len()
    );
    if user == User::Root {
        let pids: Vec<u32> = scenes.iter().map(|(_, pid)| *pid).collect();
        assert_cgroups_gone(&pids);
    }
}

/// Once a next run has started (its set-up sweeps the cgroup folders of runs that are
/// gone), no cgroup folder of the killed runs `pids` is left.
fn assert_cgroups_gone(pids: &[u32]) {
    let next = Scene::new();
    let r = next.run(&[bash("true")], "");
    assert_eq!(r.code, 0, "{r:#?}");
    let mut left = Vec::new();
    for controller in ["memory", "pids"] {
        walk(
            &Path::new("/sys/fs/cgroup").join(controller),
            6,
            &mut |dir| {
                let name = dir.file_name().unwrap_or_default().to_string_lossy();
                if name.starts_with("cn-run-")
                    && name
                        .split('-')
                        .nth(2)
                        .and_then(|p| p.parse::<u32>().ok())
                        .is_some_and(|p| pids.contains(&p))
                {
                    left.push(dir.to_path_buf());
                }
            },
        );
    }
    assert!(
        left.is_empty(),
        "cgroup folders of killed runs left: {left:?}"
    );
}

fn walk(dir: &Path, depth: usize, found: &mut impl FnMut(&Path)) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found(&e.path());
            if depth > 0 {
                walk(&e.path(), depth - 1, found);
            }
        }
    }
}

#[test]
fn a_run_killed_at_any_moment_of_its_set_up_leaves_nothing_as_root() {
    if user_available(User::Root) {
        killed_at_many_moments(User::Root);
    }
}

#[test]
fn a_run_killed_at_any_moment_of_its_set_up_leaves_nothing_as_nobody() {
    if user_available(User::Nobody) {
        killed_at_many_moments(User::Nobody);
    }
}

#[test]
fn control_the_check_finds_processes_left_with_the_runs_folder() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let b = base(&s);
    let ws = s.ws();
    // Detached (parent 1): a shell naming the folder, and a bubblewrap whose child has the
    // workspace mounted but names it nowhere in its command line.
    let named = format!("{}/left", b.display());
    let spawned = [
        vec!["setsid", "-f", "sh", "-c", "sleep 60; :", &named],
        vec![
            "setsid",
            "-f",
            "bwrap",
            "--dev-bind",
            "/",
            "/",
            "--bind",
            &ws,
            &ws,
            "sleep",
            "61",
        ],
    ];
    for argv in spawned {
        let status = std::process::Command::new(argv[0])
            .args(&argv[1..])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let give_up = Instant::now() + Duration::from_secs(30);
    // Until the shell and bubblewrap's child have executed (before, each shows the command
    // line of the process it was forked from).
    let both = |found: &[(u32, String)]| {
        found.iter().any(|(_, c)| c.contains("sleep 60"))
            && found.iter().any(|(_, c)| c.trim() == "sleep 61")
    };
    let mut found = of_the_run(&b);
    while !both(&found) && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(20));
        found = of_the_run(&b);
    }
    let left = left_after(std::slice::from_ref(&b), Duration::from_secs(1));
    assert!(
        found.iter().any(|(_, c)| c.contains("sleep 60")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(_, c)| c.trim() == "sleep 61"),
        "the mounted one was not found: {found:?}"
    );
    assert!(!left.is_empty(), "{left:?}");
    assert!(left_after_settling(&[b]).is_empty(), "killed by pid");
}
