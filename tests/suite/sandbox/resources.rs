//! Resource bounds, with the real binary on the script provider: a tool that prints a
//! gigabyte costs cn-run a bounded amount of memory and the model gets only the tail; the
//! hundreds of processes a command leaves behind (in the foreground or as a background job)
//! are all killed — by process group — when the call or the run ends. No fork bomb here: the
//! machines are shared, so the process counts stay in the hundreds and every one is a
//! `sleep` with a marker that is unique to the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::procs;
use crate::support::runner::{Run, cn_run, write_files};

/// Peak resident memory allowed to cn-run while a command prints a gigabyte.
const MAX_RSS_KB: u64 = 200 * 1024;

/// As [`job`], without containment: for tests that watch the process-group kill from the
/// host across calls (contained, each call has its own PID namespace; see
/// `containment_leaks_e2e::nothing_a_command_starts_outlives_the_call_or_the_run`).
fn job_uncontained(dir: &Path, script: &str) -> PathBuf {
    let path = job(dir, script);
    let text = std::fs::read_to_string(&path).unwrap() + "tools: {bash: {sandbox: off}}\n";
    std::fs::write(&path, text).unwrap();
    path
}

fn job(dir: &Path, script: &str) -> PathBuf {
    let job = "version: 1\nname: resources\nmodel:\n  provider: script\n  name: s\n  script: script.yaml\nprompt: go\npermissions: {mode: auto}\nlimits: {max_turns: 6, timeout: 5m}\n";
    write_files(dir, &[("job.yaml", job), ("script.yaml", script)]);
    dir.join("job.yaml")
}

/// `VmHWM` (peak resident set) of a live process, in kB.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the binary, sampling its peak memory until it exits. Returns the run and the
/// highest `VmHWM` seen (`None` where /proc is not available).
pub(crate) fn run_measured(dir: &Path, job: &Path) -> (Run, Option<u64>, Duration) {
    let out = dir.join("out");
    let (stdout, stderr) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut cmd = cn_run(dir);
    cmd.arg(job)
        .arg("-C")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::from(std::fs::File::create(&stdout).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn cn-run");
    let mut peak = None;
    let status = loop {
        if let Some(kb) = peak_rss_kb(child.id()) {
            peak = Some(peak.unwrap_or(0).max(kb));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            panic!("cn-run did not finish within 4 minutes");
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(&stdout).unwrap_or_default(),
        stderr: std::fs::read_to_string(&stderr).unwrap_or_default(),
        out: Some(out),
    };
    (run, peak, started.elapsed())
}

/// The output the model got from each Bash call, in order.
fn bash_outputs(r: &Run) -> Vec<String> {
    r.events_of("tool.finished")
        .iter()
        .filter(|e| e["tool"] == "Bash")
        .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The tool results as the session recorded them (what the model saw).
fn session_tool_results(r: &Run) -> Vec<String> {
    let session = crate::support::runner::session_of(r.out.as_ref().unwrap());
    let mut out = Vec::new();
    collect_tool_results(&session, &mut out);
    out
}

fn collect_tool_results(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.get("role").and_then(Value::as_str) == Some("tool") {
                out.push(map["content"].as_str().unwrap_or_default().to_owned());
            }
            map.values().for_each(|v| collect_tool_results(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_tool_results(v, out)),
        _ => {}
    }
}

/// `[output truncated: N earlier lines (M characters) not shown]` → (N, M).
fn truncation_note(output: &str) -> Option<(u64, u64)> {
    let rest = output.strip_prefix("[output truncated: ")?;
    let (lines, rest) = rest.split_once(" earlier lines (")?;
    let (chars, _) = rest.split_once(" characters) not shown]")?;
    Some((lines.parse().ok()?, chars.parse().ok()?))
}

/// Processes still running in the test's workspace whose whole command line is
/// `sleep_command` (not the shells that started them).
fn alive(workspace: &Path, sleep_command: &str) -> usize {
    procs::in_dir(workspace)
        .iter()
        .filter(|p| p.cmdline == sleep_command)
        .count()
}

/// A `sleep` duration no other test (or earlier run of this one) uses.
fn unique_sleep(salt: u32) -> String {
    let n = 700_000 + (std::process::id() % 50_000) * 4 + salt;
    format!("sleep {n}")
}

#[test]
fn a_gigabyte_of_output_costs_bounded_memory_and_the_model_gets_the_tail() {
    let tmp = tempfile::tempdir().unwrap();
    // One gigabyte in lines of 1000 characters, ending in a line the model must see.
    let script = r#"turns:
  - tool_calls:
      - name: Bash
        arguments:
          command: "yes \"$(printf '%0999d' 0)\" | head -c 1000000000; echo THE-LAST-LINE"
  - text: done
"#;
    let j = job(tmp.path(), script);
    let (r, peak, took) = run_measured(tmp.path(), &j);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "done\n");
    // The whole result is in the session (events carry a preview of it).
    let outputs = session_tool_results(&r);
    assert_eq!(outputs.len(), 1, "{}", r.stderr);
    let output = &outputs[0];
    assert!(
        output.trim_end().ends_with("THE-LAST-LINE"),
        "{}",
        &output[output.len().saturating_sub(300)..]
    );
    assert!(
        output.len() < 200_000,
        "the model got {} bytes",
        output.len()
    );
    // The result says exactly what was cut: with what it kept, that is the whole gigabyte.
    let (cut_lines, cut_chars) = truncation_note(output)
        .unwrap_or_else(|| panic!("no truncation note: {}", &output[..output.len().min(400)]));
    let kept = output.split_once("]\n").map_or("", |(_, rest)| rest);
    assert_eq!(cut_lines + kept.lines().count() as u64, 1_000_001);
    assert_eq!(cut_chars + kept.chars().count() as u64, 1_000_000_000 + 14);
    let events_size = std::fs::metadata(r.out.as_ref().unwrap().join("events.jsonl"))
        .unwrap()
        .len();
    assert!(
        events_size < 2_000_000,
        "events.jsonl is {events_size} bytes"
    );
    match peak {
        Some(kb) => {
            eprintln!("1 GB of output: peak RSS {} MB, {took:?}", kb / 1024);
            assert!(kb < MAX_RSS_KB, "peak RSS {} MB", kb / 1024);
        }
        None => eprintln!("skipping the memory bound: /proc/<pid>/status is not readable here"),
    }
}

#[test]
fn hundreds_of_leftover_processes_are_killed_when_the_command_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = unique_sleep(1);
    let script = format!(
        r#"turns:
  - tool_calls:
      - name: Bash
        arguments:
          command: "for i in $(seq 300); do {marker} & done; for t in $(seq 50); do [ $(pgrep -c -f '^{marker}$') -ge 300 ] && break; sleep 0.1; done; echo started $(pgrep -c -f '^{marker}$')"
  - tool_calls:
      - name: Bash
        arguments:
          command: "echo left $(pgrep -c -f '^{marker}$')"
  - text: done
"#
    );
    let j = job_uncontained(tmp.path(), &script);
    let (r, _, _) = run_measured(tmp.path(), &j);
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs = bash_outputs(&r);
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    // All 300 were running when the command printed; none survived the call, and the
    // model is told they were stopped.
    let first: Vec<&str> = outputs[0].lines().collect();
    assert_eq!(first[0], "started 300", "{outputs:?}");
    assert!(first[1].contains("they were stopped"), "{outputs:?}");
    assert_eq!(outputs[1].trim(), "left 0", "{outputs:?}");
    assert_eq!(alive(tmp.path(), &marker), 0, "sleepers outlived the run");
}

#[test]
fn a_background_job_and_its_children_are_killed_when_the_run_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = unique_sleep(2);
    let script = format!(
        r#"turns:
  - tool_calls:
      - name: Bash
        arguments:
          command: "for i in $(seq 200); do {marker} & done; echo spawned; wait"
          run_in_background: true
  - tool_calls:
      - name: Bash
        arguments:
          command: "for i in $(seq 50); do [ $(pgrep -c -f '^{marker}$') -ge 200 ] && break; sleep 0.1; done; echo running $(pgrep -c -f '^{marker}$')"
  - text: done
"#
    );
    let j = job_uncontained(tmp.path(), &script);
    let (r, _, _) = run_measured(tmp.path(), &j);
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs = bash_outputs(&r);
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(outputs[0].contains("background job"), "{outputs:?}");
    // The job's 200 children ran alongside the agent, and the run's end took them all.
    assert_eq!(outputs[1].trim(), "running 200", "{outputs:?}");
    assert_eq!(
        alive(tmp.path(), &marker),
        0,
        "background children outlived the run"
    );
}

#[test]
fn reading_a_named_pipe_is_refused_at_once_not_a_wait_for_ever() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let script =
        "turns:\n  - tool_calls: [{name: Read, arguments: {filepath: pipe}}]\n  - text: done\n";
    let j = job(tmp.path(), script);
    // Opening a pipe waits for a writer that never comes: before the fix the run hung
    // past its timeout and its SIGTERM.
    let (r, _, _) = run_measured(tmp.path(), &j);
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs = session_tool_results(&r);
    assert_eq!(outputs.len(), 1, "{}", r.stderr);
    assert!(outputs[0].contains("not a regular file"), "{outputs:?}");
}

/// The finder the leftover checks above rely on sees a process started in the workspace, by
/// its pid and command line, and nothing in another folder (so those checks can fail).
#[test]
fn the_process_finder_sees_what_runs_in_the_workspace_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new("sleep")
        .arg("600")
        .current_dir(tmp.path())
        .spawn()
        .unwrap();
    // The child is in the folder from its fork; its command line is `sleep 600` only once
    // it has run exec (under load, the first look can come before).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut found = procs::in_dir(tmp.path());
    while found.iter().any(|p| p.cmdline != "sleep 600") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
        found = procs::in_dir(tmp.path());
    }
    let pids: Vec<u32> = found.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![child.id()]);
    assert_eq!(found[0].cmdline, "sleep 600");
    let elsewhere = tempfile::tempdir().unwrap();
    assert!(procs::in_dir(elsewhere.path()).is_empty());
    procs::kill_in_dir(tmp.path());
    child.wait().unwrap();
    assert!(procs::in_dir(tmp.path()).is_empty());
}
