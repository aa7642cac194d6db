//! One process at a time writes a run folder: a second run on the same `--out` (however
//! the folder is spelled) or a resume of a run that is still going is refused in words
//! naming the holder, and the live run goes on untouched — its events one run's, numbered
//! without a gap, no call run twice. Once the holder has ended (however: `kill -9` too)
//! the folder is free again.

use std::path::Path;

use serde_json::Value;

use crate::support::live::{Live, assert_whole_lines, gate, wait_for_text};
use crate::support::runner::{Run, cn_run, run, write_files};

const JOB: &str = "version: 1\nname: held\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: count\npermissions: {mode: auto, allow: ['Bash(while *)', 'Bash(echo *)']}\n";

fn script() -> String {
    format!(
        "turns:\n  - tool_calls: [{{name: Bash, arguments: {{command: 'echo one >> log.txt'}}}}]\n{}  - text: counted\n",
        gate("go")
    )
}

/// Starts the run in `ws` with `--out out` and waits until it is held at its gate.
fn held(ws: &Path, logs: &Path) -> Live {
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--out", "out"]);
    let live = Live::start(cmd, logs, Some(&ws.join("out")));
    assert!(
        wait_for_text(&ws.join("out/events.jsonl"), "-e go ]"),
        "never reached the gate: {}",
        live.stderr_so_far()
    );
    live
}

fn assert_refused(r: &Run, pid: u32, what: &str) {
    assert_eq!(r.code, 6, "{what}: {r:#?}");
    assert!(
        r.stderr.contains("is in use by cn-run pid ")
            && r.stderr.contains(&format!("pid {pid} "))
            && r.stderr.contains("one process at a time"),
        "{what}: {}",
        r.stderr
    );
}

/// The live run's events: one run, numbered 1..n without a gap, one end.
fn assert_one_run(out: &Path) {
    let events = assert_whole_lines(&out.join("events.jsonl"));
    let ids: std::collections::BTreeSet<&str> = events
        .iter()
        .map(|e| e["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "{e}");
    }
    let started = events.iter().filter(|e| e["type"] == "run.started").count();
    let ended = events
        .iter()
        .filter(|e| e["type"] == "run.completed")
        .count();
    assert_eq!((started, ended), (1, 1));
}

#[test]
fn a_second_run_on_the_same_folder_is_refused_however_it_is_spelled() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write_files(&ws, &[("job.yaml", JOB), ("s.yaml", &script())]);
    let live = held(&ws, tmp.path());
    let absolute = ws.join("out").display().to_string();
    for spelled in ["out", "./out/", absolute.as_str()] {
        let mut cmd = cn_run(&ws);
        cmd.args(["job.yaml", "--out", spelled]);
        assert_refused(&run(cmd, None), live.pid(), spelled);
    }
    std::fs::write(ws.join("go"), "").unwrap();
    let r = live.wait();
    assert_eq!(r.code, 0, "{r:#?}");
    assert_one_run(&ws.join("out"));
    // The holder has ended: the folder is free for the next run.
    std::fs::remove_file(ws.join("go")).unwrap();
    std::fs::write(ws.join("go"), "").unwrap();
    let mut cmd = cn_run(&ws);
    cmd.args(["job.yaml"]);
    assert_eq!(run(cmd, Some(&ws.join("out"))).code, 0);
}

#[test]
fn a_resume_of_a_run_still_going_is_refused_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write_files(&ws, &[("job.yaml", JOB), ("s.yaml", &script())]);
    let live = held(&ws, tmp.path());
    for id in ["out", "./out/", "out/session.jsonl"] {
        let mut cmd = cn_run(&ws);
        cmd.args(["--resume", id]);
        assert_refused(&run(cmd, None), live.pid(), id);
        let mut cmd = cn_run(&ws);
        cmd.args(["--resume", id, "-p", "more"]);
        assert_refused(&run(cmd, None), live.pid(), id);
    }
    std::fs::write(ws.join("go"), "").unwrap();
    let r = live.wait();
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("log.txt")).unwrap(),
        "one\n"
    );
    assert_one_run(&ws.join("out"));
}

#[test]
fn a_killed_holder_leaves_the_folder_free() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write_files(&ws, &[("job.yaml", JOB), ("s.yaml", &script())]);
    let live = held(&ws, tmp.path());
    live.signal("KILL");
    let killed = live.wait();
    assert_eq!(killed.code, -1);
    crate::support::procs::kill_in_dir(&ws);
    std::fs::write(ws.join("go"), "").unwrap();
    let mut cmd = cn_run(&ws);
    cmd.args(["--resume", "out", "--format", "json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["result"], "counted");
    assert_eq!(
        std::fs::read_to_string(ws.join("log.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn a_second_parallel_call_on_the_same_folder_is_refused_before_any_job_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let other = JOB.replace("name: held", "name: other");
    write_files(
        &ws,
        &[
            ("job.yaml", JOB),
            ("other.yaml", &other),
            ("s.yaml", &script()),
        ],
    );
    // Both jobs at once, in the workspace, their folders under `out`.
    let both = |out: &'static str| -> Vec<&'static str> {
        let flags = ["--parallel", "2", "--isolate", "none", "--out", out];
        ["job.yaml", "other.yaml"]
            .into_iter()
            .chain(flags)
            .collect()
    };
    let mut cmd = cn_run(&ws);
    cmd.args(both("top"));
    let live = Live::start(cmd, tmp.path(), None);
    for job in ["held", "other"] {
        let events = ws.join("top").join(job).join("events.jsonl");
        assert!(
            wait_for_text(&events, "-e go ]"),
            "{}",
            live.stderr_so_far()
        );
    }
    // Another call on the same folder, with the same jobs or a lone run: refused.
    let calls = [
        both("top"),
        both("./top/"),
        vec!["job.yaml", "--out", "top"],
    ];
    for args in calls {
        let mut cmd = cn_run(&ws);
        cmd.args(&args);
        assert_refused(&run(cmd, None), live.pid(), &format!("{args:?}"));
    }
    assert!(
        !ws.join("top/summary.json").exists(),
        "no call wrote the report of another"
    );
    std::fs::write(ws.join("go"), "").unwrap();
    let r = live.wait();
    assert_eq!(r.code, 0, "{r:#?}");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("top/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["jobs"], 2, "{summary}");
    for job in ["held", "other"] {
        assert_one_run(&ws.join("top").join(job));
    }
}
