//! A panic inside a run is an internal error: exit 6, with result.json, events.jsonl and a
//! session that `--resume` accepts left behind, and nothing the run had not reached done.
//! The panic is injected by the debug-only test hook `CN_RUN_TEST_PANIC=POINT:TURN`
//! (`src/app/fault.rs`; no real input makes the runner panic).

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{cn_run, run, run_folder, session_of, write_files};

const JOB: &str = "version: 1\nname: panicky\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: write three files\npermissions: {mode: auto, allow: ['Bash(echo *)']}\n";

/// Three turns, each writing `fN.txt` and appending to log.txt, then a final answer.
fn script() -> String {
    let mut s = String::from("turns:\n");
    for i in 1..=3 {
        s.push_str(&format!(
            "  - tool_calls:\n      - {{name: Write, arguments: {{filepath: f{i}.txt, content: \"{i}\"}}}}\n      - {{name: Bash, arguments: {{command: 'echo {i} >> log.txt'}}}}\n"
        ));
    }
    s.push_str("  - text: all written\n");
    s
}

fn assistant_turns(session: &Value) -> usize {
    session["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// (fault, files the run must have written, the first file it must not have written, the
/// assistant turns the session must hold).
const CASES: [(&str, &[&str], &str, usize); 6] = [
    ("after_response:1", &[], "f1.txt", 1),
    ("tool_finished:1", &[], "f2.txt", 1),
    ("after_turn:1", &["f1.txt"], "f2.txt", 1),
    ("after_response:2", &["f1.txt"], "f2.txt", 2),
    ("after_turn:2", &["f1.txt", "f2.txt"], "f3.txt", 2),
    ("tool_finished:3", &["f1.txt", "f2.txt"], "f4.txt", 3),
];

fn check_case(ws: &Path, fault: &str, written: &[&str], not_written: &str, turns: usize) {
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").env("CN_RUN_TEST_PANIC", fault);
    let r = run(cmd, None);
    assert_eq!(r.code, 6, "{fault}: {r:#?}");
    assert!(
        r.stderr.contains("injected test fault"),
        "{fault}: the panic is said: {}",
        r.stderr
    );
    let folder = run_folder(ws);
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(result["status"], "internal_error", "{fault}: {result}");
    assert_eq!(result["exit_code"], 6, "{fault}: {result}");
    assert!(
        result.to_string().contains("injected test fault"),
        "{fault}: result.json says why: {result}"
    );
    assert!(folder.join("events.jsonl").is_file(), "{fault}");
    for f in written {
        assert!(
            ws.join(f).is_file(),
            "{fault}: {f} was written before the panic"
        );
    }
    assert!(
        !ws.join(not_written).exists(),
        "{fault}: nothing runs after the panic ({not_written})"
    );
    let session = session_of(&folder);
    assert_eq!(assistant_turns(&session), turns, "{fault}: {session}");
}

#[test]
fn a_panic_inside_the_run_exits_6_with_its_result_and_session() {
    for (fault, written, not_written, turns) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        write_files(ws, &[("job.yaml", JOB), ("s.yaml", &script())]);
        check_case(ws, fault, written, not_written, turns);
    }
}

/// The session a panicked run leaves is one `--resume` continues to the end.
#[test]
fn a_run_that_panicked_resumes_to_the_end() {
    for fault in ["after_response:2", "after_turn:1", "tool_finished:3"] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        write_files(ws, &[("job.yaml", JOB), ("s.yaml", &script())]);
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml").env("CN_RUN_TEST_PANIC", fault);
        assert_eq!(run(cmd, None).code, 6, "{fault}");
        let mut cmd = cn_run(ws);
        cmd.args(["--resume", "latest", "-p", "carry on"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{fault}: {r:#?}");
        let result: Value = serde_json::from_str(
            &std::fs::read_to_string(run_folder(ws).join("result.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(result["status"], "success", "{fault}: {result}");
    }
}
