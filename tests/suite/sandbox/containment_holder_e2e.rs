//! The run's sandbox holder (`cn-run-call --hold`, PID 1 of the run's one sandbox) never
//! outlives its run. Holders with parent pid 1 were seen after full test runs: bubblewrap
//! sets the holder's parent-death signal only just before it executes it, so when
//! bubblewrap's first process died while the holder was still being set up (cn-run ending
//! during its sandbox's set-up), the holder was left to init and held forever.
//!
//! The test widens that window at will: a `bwrap` first on `PATH` passes the holder's
//! bubblewrap `--block-fd` on a FIFO the test owns, so the holder's set-up waits before its
//! parent-death signal is set. The test SIGKILLs the cn-run it started (its own pid) while
//! the holder waits, then lets the holder go on, and looks for any process of the run (one
//! whose mounts name the run's unique workspace) a few seconds later. The control lets the
//! holder go on with cn-run alive: the run uses that holder and its command runs.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::containment_scene::{Scene, User, bash, user_available};

/// A `bwrap` that blocks the holder's set-up on `dir/fifo` and records its pid.
fn blocking_bwrap(dir: &Path) -> PathBuf {
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let real = which_bwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in\n*\" --hold \"*)\n  echo $$ > '{d}/monitor'\n  \
         exec 9<>'{f}'\n  exec '{real}' --block-fd 9 \"$@\";;\nesac\nexec '{real}' \"$@\"\n",
        d = dir.display(),
        f = fifo.display(),
        real = real.display(),
    );
    let wrapper = dir.join("bwrap");
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.to_path_buf()
}

fn which_bwrap() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap"))
}

/// Processes whose mounts name `ws` (the run's sandbox binds it): the run's own.
fn of_the_run(ws: &Path) -> Vec<(i32, String)> {
    let needle = format!(" {} ", ws.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
                .is_ok_and(|m| m.contains(&needle))
        })
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect()
}

/// Start cn-run with the blocking `bwrap` and wait until the holder's set-up waits.
fn start_blocked(s: &Scene, dir: &Path) -> Child {
    let turns = vec![json!({"tool_calls": [bash("touch ran")]})];
    let mut cmd = s.command(turns, "", &[]);
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env("PATH", format!("{}:{path}", blocking_bwrap(dir).display()))
        .arg("--out")
        .arg(&s.out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !dir.join("monitor").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the holder's bubblewrap never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // bubblewrap's first process sets its own parent-death signal; the holder waits.
    std::thread::sleep(Duration::from_millis(500));
    child
}

fn release(dir: &Path) {
    let mut fifo = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("fifo"))
        .unwrap();
    fifo.write_all(b"x").unwrap();
}

#[test]
fn a_holder_whose_run_died_during_its_set_up_does_not_outlive_the_run() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_blocked(&s, dir.path());
    child.kill().unwrap();
    child.wait().unwrap();
    release(dir.path());
    std::thread::sleep(Duration::from_secs(3));
    let left = of_the_run(&s.ws);
    for (pid, _) in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "processes of the run outlived it (killed now): {left:?}"
    );
}

#[test]
fn control_with_cn_run_alive_the_released_holder_runs_the_runs_command() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_blocked(&s, dir.path());
    release(dir.path());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(s.ws.join("ran").exists(), "the command did not run");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.out.join("result.json")).unwrap()).unwrap();
    let notes = result["sandbox"].to_string();
    assert!(
        !notes.contains("bubblewrap of its own"),
        "the run did not use its one sandbox: {notes}"
    );
    assert!(of_the_run(&s.ws).is_empty());
}
