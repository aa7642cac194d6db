//! A cn-run killed with SIGKILL takes every command of its run with it (issue 16): the test
//! starts cn-run on a scripted job whose commands sleep and then write a marker, kills that
//! cn-run (its own pid, `kill -9`) once they run, and finds no marker written afterwards and
//! no process of the run alive (looked up in `/proc` by the run's unique workspace path in
//! the command line). One case per way a command is started: a Bash call (with each network
//! setting, since they start commands differently), one that detached a grandchild with
//! `setsid`, parallel calls, a background job, and a check.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::containment_scene::{Scene, bash, namespaces_available};

/// Processes whose command line holds `token`.
fn alive_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(token) {
                found.push(format!("{}: {text}", name.to_string_lossy()));
            }
        }
    }
    found
}

/// A command that says it started (`ran-TAG`), then writes `late-TAG` after 3 s.
fn slow(ws: &Path, tag: &str) -> String {
    format!(
        "touch '{ws}/ran-{tag}'; sleep 3; touch '{ws}/late-{tag}'",
        ws = ws.display()
    )
}

/// Start cn-run on `turns` with the job lines `extra`, SIGKILL it once every `ran-TAG` of
/// `tags` exists, then check that no `late-*` appears and no process of the run lives.
fn killed_midway(s: &Scene, turns: Vec<Value>, extra: &str, tags: &[&str]) {
    let mut cmd = s.command(turns, extra, &[]);
    cmd.arg("--out")
        .arg(&s.out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !tags.iter().all(|t| s.ws.join(format!("ran-{t}")).exists()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the commands never started: {tags:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let alive = alive_with(&s.ws());
    std::thread::sleep(Duration::from_secs(4));
    let late: Vec<String> = std::fs::read_dir(&s.ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("late-"))
        .collect();
    assert!(
        alive.is_empty(),
        "processes of the run outlived cn-run: {alive:?}"
    );
    assert!(
        late.is_empty(),
        "commands ran on after cn-run was killed: {late:?}"
    );
}

fn one_call_per_turn(calls: Vec<Value>) -> Vec<Value> {
    calls
        .into_iter()
        .map(|c| json!({"tool_calls": [c]}))
        .collect()
}

#[test]
fn a_bash_call_dies_with_cn_run_under_every_network_setting() {
    if !namespaces_available() {
        return;
    }
    for (tag, network) in [
        ("none", "false"),
        ("all", "true"),
        ("hosts", "[example.com]"),
    ] {
        let s = Scene::new();
        let turns = one_call_per_turn(vec![bash(&slow(&s.ws, tag))]);
        killed_midway(
            &s,
            turns,
            &format!("tools: {{bash: {{network: {network}}}}}\n"),
            &[tag],
        );
    }
}

#[test]
fn a_detached_grandchild_and_parallel_calls_die_with_cn_run() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let detached = format!(
        "setsid -f sh -c \"{}\"; touch '{}/ran-parent'; sleep 30",
        slow(&s.ws, "setsid"),
        s.ws()
    );
    let turns = vec![json!({"tool_calls": [
        bash(&detached),
        bash(&slow(&s.ws, "par1")),
        bash(&slow(&s.ws, "par2")),
    ]})];
    killed_midway(&s, turns, "", &["setsid", "parent", "par1", "par2"]);
}

#[test]
fn a_background_job_dies_with_cn_run() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let bg = json!({"name": "Bash", "arguments": {"command": slow(&s.ws, "bg"), "run_in_background": true}});
    let turns = one_call_per_turn(vec![bg, bash(&format!("{}; sleep 30", slow(&s.ws, "fg")))]);
    killed_midway(&s, turns, "", &["bg", "fg"]);
}

#[test]
fn a_check_dies_with_cn_run() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let checks = format!(
        "checks: [{{name: slow, run: \"{}\"}}]\n",
        slow(&s.ws, "check").replace('\'', "")
    );
    killed_midway(&s, Vec::new(), &checks, &["check"]);
}
