//! The session log (session.jsonl) as a user meets it: a run SIGKILLed at any moment leaves
//! a session `--resume` accepts, the file is never replaced or shrunk while the run writes
//! it, a torn last line is skipped and said, and a session.json of an earlier version
//! still resumes.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::runner::{cn_run, run, run_folder, session_of, write_files};

const JOB: &str = "version: 1\nname: logged\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: write and count\npermissions: {mode: auto, allow: ['Bash(echo *)']}\n";

/// `turns` turns of a big Write and an `echo N >> log.txt` each, then the answer.
fn script(turns: usize) -> String {
    let mut s = String::from("turns:\n");
    let body = "x".repeat(20_000);
    for i in 1..=turns {
        s.push_str(&format!(
            "  - tool_calls:\n      - {{name: Write, arguments: {{filepath: f{i}.txt, content: \"{i} {body}\"}}}}\n      - {{name: Bash, arguments: {{command: 'echo {i} >> log.txt'}}}}\n"
        ));
    }
    s.push_str("  - text: all done\n");
    s
}

fn event_lines(dir: &Path) -> usize {
    let Ok(runs) = std::fs::read_dir(dir.join(".cn-run")) else {
        return 0;
    };
    runs.filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path().join("events.jsonl")).unwrap_or_default())
        .map(|t| t.lines().count())
        .sum()
}

fn session_file(dir: &Path) -> Option<std::fs::Metadata> {
    let runs = std::fs::read_dir(dir.join(".cn-run")).ok()?;
    runs.filter_map(Result::ok)
        .find_map(|e| std::fs::metadata(e.path().join("session.jsonl")).ok())
}

/// Start the run, watch the session file until `events` events are written (inode the
/// same, length never smaller), then SIGKILL the child (its own pid).
fn run_and_kill(dir: &Path, events: usize) {
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let mut seen: Option<(u64, u64)> = None;
    while event_lines(dir) < events {
        if let Some(m) = session_file(dir) {
            if let Some((ino, len)) = seen {
                assert_eq!(m.ino(), ino, "the session file was replaced");
                assert!(
                    m.len() >= len,
                    "the session file shrank: {len} -> {}",
                    m.len()
                );
            }
            seen = Some((m.ino(), m.len()));
        }
        assert!(start.elapsed() < Duration::from_secs(60), "run too slow");
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_micros(fastrand::u64(0..3000)));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The numbers `log.txt` holds: each at most once (a killed call is not run again).
fn assert_no_call_twice(dir: &Path, what: &str) {
    let log = std::fs::read_to_string(dir.join("log.txt")).unwrap_or_default();
    let mut lines: Vec<&str> = log.lines().collect();
    let all = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), all, "{what}: a call ran twice: {log}");
}

#[test]
fn a_run_killed_at_any_moment_leaves_a_session_that_resume_accepts() {
    fastrand::seed(19);
    // Kill points by events written: before the first turn, within the first turns, and
    // deep into the run (about 8 events a turn; 12 turns).
    for events in [1, 3, 7, 12, 20, 33, 47, 61] {
        let tmp = tempfile::tempdir().unwrap();
        let what = format!("killed after {events} events");
        write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", &script(12))]);
        run_and_kill(tmp.path(), events);
        let run_dir = run_folder(tmp.path());
        let session = session_of(&run_dir);
        assert_eq!(session["state"], "running", "{what}");
        let mut cmd = cn_run(tmp.path());
        cmd.args(["sessions", "show", "latest"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{what}: {r:#?}");
        assert!(
            r.stdout.contains("user: write and count"),
            "{what}: {}",
            r.stdout
        );

        let mut cmd = cn_run(tmp.path());
        cmd.args(["--resume", "latest", "--format", "json"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{what}: {r:#?}");
        let result: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(result["result"], "all done", "{what}");
        assert_no_call_twice(tmp.path(), &what);
        let session = session_of(&run_dir);
        assert_eq!(session["state"], "finished", "{what}");
        let assistants = session["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        assert_eq!(assistants, 13, "{what}: every scripted turn exactly once");
    }
}

#[test]
fn a_torn_last_line_is_skipped_on_resume_and_said() {
    // Cut points: a fraction of the way through the lines before the answer, the cut
    // falling inside the line (a process killed while appending it). events.jsonl is gone
    // (with it, the lines it holds come back: `a_cut_log_is_caught_up_from_the_events`).
    for (k, fraction) in [0.05, 0.2, 0.4, 0.6, 0.8, 0.95].into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", &script(6))]);
        let mut cmd = cn_run(tmp.path());
        cmd.arg("job.yaml");
        assert_eq!(run(cmd, None).code, 0);
        let (path, n, lines) = tear(&run_folder(tmp.path()), fraction, k);
        std::fs::remove_file(path.with_file_name("events.jsonl")).unwrap();
        let what = format!("cut inside line {} of {}", n + 1, lines);

        let mut cmd = cn_run(tmp.path());
        cmd.args(["--resume", "latest", "--format", "json"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{what}: {r:#?}");
        assert!(
            r.stderr.contains(&format!("line {}", n + 1)) && r.stderr.contains("incomplete"),
            "{what}: {}",
            r.stderr
        );
        let result: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(result["result"], "all done", "{what}");
        // The resumed run cut the torn line off before appending: every line parses.
        for l in std::fs::read_to_string(&path).unwrap().lines() {
            serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}"));
        }
        // (The workspace is the finished run's, so calls past the cut ran before: only the
        // session is checked here; the kill test checks that no call runs twice.)
        let session = session_of(path.parent().unwrap());
        assert_eq!(session["state"], "finished", "{what}");
        let assistants = session["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        assert_eq!(assistants, 7, "{what}: every scripted turn exactly once");
    }
}

/// Cuts the session log in `folder` inside the line a `fraction` of the way to the answer;
/// (the log, the index of the torn line, how many lines the log had).
fn tear(folder: &Path, fraction: f64, k: usize) -> (std::path::PathBuf, usize, usize) {
    let path = folder.join("session.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let answer = lines.iter().position(|l| l.contains("all done")).unwrap();
    let n = ((answer as f64 * fraction) as usize).clamp(1, answer - 1);
    let mut torn = lines[..n].join("\n") + "\n";
    let line = lines[n];
    torn.push_str(&line[..line.len() / 2 + k]);
    std::fs::write(&path, &torn).unwrap();
    (path, n, lines.len())
}

#[test]
fn a_cut_log_is_caught_up_from_the_events() {
    // The same cuts with events.jsonl whole: the lines it holds come back before the
    // resume reads the log, so the run is known to have finished (nothing runs again)
    // and the log is the whole run's again.
    for (k, fraction) in [0.05, 0.4, 0.95].into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("job.yaml", JOB), ("s.yaml", &script(6))]);
        let mut cmd = cn_run(tmp.path());
        cmd.arg("job.yaml");
        assert_eq!(run(cmd, None).code, 0);
        let folder = run_folder(tmp.path());
        let whole = std::fs::read_to_string(folder.join("session.jsonl")).unwrap();
        let (_, n, _) = tear(&folder, fraction, k);
        let mut cmd = cn_run(tmp.path());
        cmd.args(["--resume", "latest"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "cut at line {}: {r:#?}", n + 1);
        assert!(
            r.stderr
                .contains("lines were missing and were added from events.jsonl")
                && r.stderr.contains("already finished (success)"),
            "{}",
            r.stderr
        );
        assert_eq!(
            std::fs::read_to_string(folder.join("session.jsonl")).unwrap(),
            whole,
            "cut at line {}",
            n + 1
        );
        assert_no_call_twice(tmp.path(), "caught up");
    }
}

#[test]
fn a_torn_last_event_line_is_cut_before_a_resume_appends_its_events() {
    // A run that stopped at its turn limit, its events.jsonl ending in half a line (a
    // process killed while writing it), resumed with a new instruction: every line parses,
    // and `cn-run report` folds the file into the result the resumed run wrote.
    let partials = [
        "{",
        "{\"schema_version\":1,\"seq\":99,",
        "{\"schema_version\":1,\"seq\":99,\"ts\":\"2026-01-01T00:00:00.000Z\",\"run_id\":\"r\",\"type\":\"warn",
        "{\"schema_version\":1,\"seq\":99,\"ts\":\"t\",\"run_id\":\"r\",\"type\":\"message.appended\",\"message\":{\"role\":\"user\",\"content\":\"half",
        "not json at all",
    ];
    for partial in partials {
        let tmp = tempfile::tempdir().unwrap();
        let job = JOB.replace("prompt:", "limits: {max_turns: 2}\nprompt:");
        write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", &script(3))]);
        let out = tmp.path().join("out");
        let mut cmd = cn_run(tmp.path());
        cmd.arg("job.yaml");
        assert_eq!(run(cmd, Some(&out)).code, 4, "{partial}: the turn limit");
        let events = out.join("events.jsonl");
        let mut text = std::fs::read_to_string(&events).unwrap();
        text.push_str(partial);
        std::fs::write(&events, text).unwrap();

        let mut cmd = cn_run(tmp.path());
        cmd.arg("--resume")
            .arg(&out)
            .args(["--max-turns", "10", "-p", "go on"]);
        // `run` replays the folder: result.json must be the fold of events.jsonl.
        let r = run(cmd, Some(&out));
        assert_eq!(r.code, 0, "{partial}: {r:#?}");
        for l in std::fs::read_to_string(&events).unwrap().lines() {
            serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{partial}: {e}: {l}"));
        }
    }
}

#[test]
fn a_session_json_of_an_earlier_version_resumes_into_a_log() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap();
    write_files(&ws, &[("job.yaml", JOB), ("s.yaml", &script(2))]);
    let old = serde_json::json!({
        "schema_version": 1, "session_id": "old-run",
        "job": {"name": "logged", "file": ws.join("job.yaml"), "text": JOB, "params": [], "args": []},
        "workspace": ws, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:01Z",
        "state": "running", "status": null, "turns": 1,
        "usage": {"input_tokens": 10, "output_tokens": 5}, "cost_usd": null, "last_seq": 0,
        "history": [
            {"role": "user", "content": "write and count"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "w1", "name": "Write", "arguments": "{\"filepath\":\"f1.txt\",\"content\":\"1\"}"},
                {"id": "b1", "name": "Bash", "arguments": "{\"command\":\"echo 1 >> log.txt\"}"}]},
            {"role": "tool", "tool_call_id": "w1", "name": "Write", "content": "wrote f1.txt"}
        ],
        "in_flight": ["b1"], "checkpoints": []
    });
    let dir = ws.join(".cn-run/old-run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("session.json"),
        serde_json::to_string_pretty(&old).unwrap(),
    )
    .unwrap();
    let mut cmd = cn_run(&ws);
    cmd.args(["sessions", "list", "--json"]);
    let rows: Value = serde_json::from_str(&run(cmd, None).stdout).unwrap();
    assert_eq!(rows[0]["session_id"], "old-run");

    let mut cmd = cn_run(&ws);
    cmd.args(["--resume", "old-run", "--format", "json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["result"], "all done");
    // The call in flight when the old process died was not run again; turn 2's was.
    assert_eq!(std::fs::read_to_string(ws.join("log.txt")).unwrap(), "2\n");
    let session = session_of(&dir);
    assert_eq!(session["session_id"], "old-run");
    assert_eq!(session["state"], "finished");
    let interrupted = session["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "b1")
        .unwrap()
        .clone();
    assert!(
        interrupted["content"].as_str().unwrap().contains("killed"),
        "{interrupted}"
    );
}
