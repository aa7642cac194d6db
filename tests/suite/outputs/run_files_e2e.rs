//! The run's own files on a file system that fails under them: a run folder on a small
//! tmpfs that fills (for good, or until the run's end), one remounted read-only in the
//! middle of the run. Whatever happens the outcome is true: exit 6 naming the file and the
//! system's reason when a file lacks what the run did, result.json wherever it can be
//! written (else its absence with exit 6 and the words on stderr), no torn line anywhere,
//! no call run that the run could not record, and nothing lost when there was room in the
//! end. (The mounts need root: elsewhere each test says it is skipped.)

use std::path::Path;

use serde_json::Value;

use crate::support::live::{Live, assert_whole_lines, gate};
use crate::support::mounts::{Mount, can_mount};
use crate::support::runner::{cn_run, git_init, write_files};

const MODEL: &str = "model: {provider: script, name: m, script: s.yaml}\n";

fn job(rest: &str) -> String {
    format!(
        "version: 1\nname: files\n{MODEL}prompt: write\npermissions: {{mode: auto, allow: ['Bash(while *)']}}\n{rest}"
    )
}

/// `n` turns, each a Write of `size` bytes to `f<i>.txt`, then the answer.
fn writes(n: usize, size: usize) -> String {
    let body = "x".repeat(size);
    let mut s = String::from("turns:\n");
    for i in 1..=n {
        s.push_str(&format!(
            "  - tool_calls: [{{name: Write, arguments: {{filepath: f{i}.txt, content: \"{i} {body}\"}}}}]\n"
        ));
    }
    s.push_str("  - text: all written\n");
    s
}

fn result_of(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

/// No temporary file of a failed whole-file write is left in the run folder.
fn assert_no_leftovers(out: &Path) {
    let left: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "left in {}: {left:?}", out.display());
}

#[test]
fn logs_that_fill_the_disk_for_good_stop_the_run_before_an_unrecorded_call() {
    if !can_mount("logs_that_fill_the_disk") {
        return;
    }
    // Sizes of the folder (the 1 MiB reserve included) and of each Write: the disk fills
    // at a different line each time.
    for (size, body) in [("1150k", 20_000), ("1200k", 31_000), ("1300k", 45_000)] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        write_files(
            &ws,
            &[("job.yaml", &job("")), ("s.yaml", &writes(12, body))],
        );
        let Some(disk) = Mount::tmpfs(&tmp.path().join("disk"), size) else {
            return;
        };
        let out = tmp.path().join("disk/out");
        let mut cmd = cn_run(&ws);
        cmd.args(["job.yaml", "--format", "json", "--out"])
            .arg(&out);
        let r = Live::start(cmd, tmp.path(), Some(&out)).wait();
        let what = format!("{size}, {body} bytes a write");
        assert_eq!(r.code, 6, "{what}: {r:#?}");
        let result = result_of(&out);
        let reason = result["reason"].as_str().unwrap();
        assert_eq!(result["status"], "internal_error", "{what}");
        assert!(
            reason.contains("No space left on device")
                && reason.contains("cannot record the start of tool call")
                && reason.contains("the call was not run"),
            "{what}: {reason}"
        );
        let stdout: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            stdout["exit_code"], 6,
            "{what}: stdout says what the file says"
        );
        // Each line that reached a log is whole; a call whose start a log could not
        // record did not run: every file written has its start in both logs.
        let events = assert_whole_lines(&out.join("events.jsonl"));
        let session = assert_whole_lines(&out.join("session.jsonl"));
        let in_events = |id: &str| {
            events
                .iter()
                .any(|e| e["type"] == "tool.started" && e["call_id"] == id)
        };
        let in_session = |id: &str| {
            session.iter().any(|l| {
                l["type"] == "tools_started"
                    && l["call_ids"].as_array().unwrap().iter().any(|c| c == id)
            })
        };
        let written: Vec<usize> = (1..=12)
            .filter(|i| ws.join(format!("f{i}.txt")).exists())
            .collect();
        for i in &written {
            let id = format!("call_{i}_0");
            assert!(
                in_events(&id) && in_session(&id),
                "{what}: {id} ran unrecorded"
            );
        }
        assert!(written.len() < 12, "{what}: the disk never filled");
        assert_no_leftovers(&out);
        drop(disk);
    }
}

/// A run held at the gate `go` (a file of its workspace): the test does `meanwhile`
/// (fills the disk, remounts…) once the gate's call has started, then opens the gate.
fn gated_run(
    ws: &Path,
    logs: &Path,
    out: &Path,
    go: &str,
    meanwhile: impl FnOnce(),
) -> crate::support::runner::Run {
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--format", "json", "--out"]).arg(out);
    let live = Live::start(cmd, logs, Some(out));
    // The call's start is recorded (`tool.started`), not only the model's answer: the
    // first command may wait for the sandbox between the two.
    let (events, gate) = (out.join("events.jsonl"), format!("-e {go} ]"));
    let started = crate::support::procs::wait_for(|| {
        std::fs::read_to_string(&events)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains("\"type\":\"tool.started\"") && l.contains(&gate))
    });
    assert!(
        started,
        "the gate's call never started: {}",
        live.stderr_so_far()
    );
    meanwhile();
    std::fs::write(ws.join(go), "").unwrap();
    live.wait()
}

#[test]
fn a_disk_full_until_the_end_loses_nothing_and_says_so() {
    if !can_mount("a_disk_full_until_the_end") {
        return;
    }
    // The disk fills while the gate's call runs; what the run writes after it waits and
    // goes out at the end, in the room the run set aside.
    for extra in ["", "checks: [{name: ok, run: 'true'}]\n"] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        // The call prints ~19 kB once the gate opens: its result is more than the slack a
        // full tmpfs leaves in the logs' last pages, so the write after it fails for sure.
        let loud = gate("go").replace("done'", "done; seq 1 4000'");
        let script = format!("turns:\n{loud}  - text: waited\n");
        write_files(&ws, &[("job.yaml", &job(extra)), ("s.yaml", &script)]);
        let Some(disk) = Mount::tmpfs(&tmp.path().join("disk"), "1400k") else {
            return;
        };
        let out = tmp.path().join("disk/out");
        let r = gated_run(&ws, tmp.path(), &out, "go", || {
            disk.fill(0);
        });
        assert_eq!(r.code, 0, "{extra}: {r:#?}");
        let result = result_of(&out);
        assert_eq!(result["status"], "success", "{result}");
        let warned = result["warnings"].as_array().unwrap().iter().any(|w| {
            w.as_str().unwrap().contains("No space left on device")
                && w.as_str().unwrap().contains("nothing was lost")
        });
        assert!(warned, "{result}");
        let events = assert_whole_lines(&out.join("events.jsonl"));
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["seq"], i as u64 + 1, "{e}");
        }
        assert_eq!(events.last().unwrap()["type"], "run.completed");
        assert_whole_lines(&out.join("session.jsonl"));
        // Every file is the fold of events.jsonl: nothing is missing from it.
        crate::support::outputs_replay::assert_replays(&out);
        drop(disk);
    }
}

#[test]
fn a_diff_patch_that_cannot_be_written_is_exit_6_naming_it() {
    if !can_mount("a_diff_patch_that_cannot_be_written") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = format!(
        "turns:\n  - tool_calls: [{{name: Write, arguments: {{filepath: big.txt, content: \"{}\"}}}}]\n{}  - text: waited\n",
        "y".repeat(60_000),
        gate("go")
    );
    write_files(&ws, &[("job.yaml", &job("")), ("s.yaml", &script)]);
    git_init(&ws);
    let Some(disk) = Mount::tmpfs(&tmp.path().join("disk"), "1400k") else {
        return;
    };
    let out = tmp.path().join("disk/out");
    let r = gated_run(&ws, tmp.path(), &out, "go", || {
        disk.fill(0);
    });
    assert_eq!(r.code, 6, "{r:#?}");
    let result = result_of(&out);
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains("diff.patch: No space left on device")
            && reason.contains("the run itself: the agent finished"),
        "{reason}"
    );
    assert!(!out.join("diff.patch").exists(), "no half a patch");
    assert_eq!(
        assert_whole_lines(&out.join("events.jsonl"))
            .last()
            .unwrap()["type"],
        "run.completed"
    );
    assert_no_leftovers(&out);
    // Control: the same run with room writes its patch and succeeds.
    let out2 = tmp.path().join("out2");
    std::fs::remove_file(ws.join("go")).unwrap();
    std::fs::remove_file(ws.join("big.txt")).unwrap();
    let r = gated_run(&ws, tmp.path(), &out2, "go", || {});
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        std::fs::read_to_string(out2.join("diff.patch"))
            .unwrap()
            .contains("big.txt")
    );
    drop(disk);
}

#[test]
fn a_run_folder_gone_read_only_leaves_no_result_that_lies() {
    if !can_mount("a_run_folder_gone_read_only") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = format!("turns:\n{}  - text: waited\n", gate("go"));
    write_files(&ws, &[("job.yaml", &job("")), ("s.yaml", &script)]);
    let out = tmp.path().join("out");
    // An earlier run in the same folder: its result.json says success.
    let r = gated_run(&ws, tmp.path(), &out, "go", || {});
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(out.join("result.json").is_file());
    let script = format!("turns:\n{}  - text: waited\n", gate("go2"));
    write_files(&ws, &[("s.yaml", &script)]);
    let mut mounted = None;
    let r = gated_run(&ws, tmp.path(), &out, "go2", || {
        mounted = Mount::read_only(&out);
    });
    let Some(read_only) = mounted else { return };
    assert_eq!(r.code, 6, "{r:#?}");
    assert!(
        r.stderr.contains("result.json") && r.stderr.contains("Read-only file system"),
        "{}",
        r.stderr
    );
    // Not the earlier run's success: no result.json (nor page) stands for this run.
    assert!(!out.join("result.json").exists());
    assert!(!out.join("report.html").exists(), "the earlier run's page");
    assert!(r.stderr.contains("report.html"), "{}", r.stderr);
    let stdout: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(stdout["status"], "internal_error");
    assert!(
        stdout["reason"]
            .as_str()
            .unwrap()
            .contains("Read-only file system")
    );
    drop(read_only);
}

#[test]
fn a_report_asked_for_and_not_written_is_exit_6() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let answer = "turns:\n  - text: done\n";
    let second = job("").replace("name: files", "name: other");
    write_files(
        ws,
        &[
            ("job.yaml", &job("")),
            ("other.yaml", &second),
            ("s.yaml", answer),
        ],
    );
    // --junit naming a folder, and a combined summary.json that is a folder.
    std::fs::create_dir_all(ws.join("report.xml")).unwrap();
    std::fs::create_dir_all(ws.join("top/summary.json")).unwrap();
    let cases: [(&[&str], &str); 2] = [
        (
            &["job.yaml", "--junit", "report.xml"],
            "cannot write report.xml",
        ),
        (
            &[
                "job.yaml",
                "other.yaml",
                "--isolate",
                "none",
                "--out",
                "top",
            ],
            "cannot write the combined report",
        ),
    ];
    for (args, words) in cases {
        let mut cmd = cn_run(ws);
        cmd.args(args);
        let r = crate::support::runner::run(cmd, None);
        assert_eq!(r.code, 6, "{args:?}: {r:#?}");
        assert!(r.stderr.contains(words), "{args:?}: {}", r.stderr);
    }
    // Control: where they can be written, the same calls succeed.
    for args in [
        &["job.yaml", "--junit", "ok.xml"][..],
        &[
            "job.yaml",
            "other.yaml",
            "--isolate",
            "none",
            "--out",
            "top2",
        ],
    ] {
        let mut cmd = cn_run(ws);
        cmd.args(args);
        let r = crate::support::runner::run(cmd, None);
        assert_eq!(r.code, 0, "{args:?}: {r:#?}");
    }
}
