//! `--resume` continues a run from where it stopped, in the phase it stopped in, with the
//! tools as the earlier process left them: after a limit, an interrupt, a provider outage
//! or a crash (no new instruction needed), during its checks (the model is not asked
//! again; the checks that ended are not run again), before its first checkpoint (the diff
//! is still whole), with a cut session log (the calls events.jsonl saw start are not run
//! again). No call runs twice, and the result counts the whole run.

use std::path::Path;

use serde_json::Value;

use crate::support::http::{MockServer, Reply};
use crate::support::live::{Live, wait_for_text};
use crate::support::procs;
use crate::support::runner::{Run, cn_run, git_init, run, session_of, write_files};
use crate::support::sse::openai;

fn job(rest: &str) -> String {
    format!(
        "version: 1\nname: again\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: fix calc\npermissions: {{mode: auto, allow: ['Bash(*)']}}\n{rest}"
    )
}

/// Calls of a scripted turn, one line of YAML.
fn turn(calls: &str) -> String {
    format!("  - tool_calls: [{calls}]\n")
}

fn echo(n: u32) -> String {
    format!("{{name: Bash, arguments: {{command: 'echo {n} >> log.txt'}}}}")
}

fn resume(ws: &Path, extra: &[&str]) -> Run {
    let mut cmd = cn_run(ws);
    cmd.args(["--resume", "out", "--format", "json"])
        .args(extra);
    run(cmd, Some(&ws.join("out")))
}

fn result_json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:#?}"))
}

/// Each number 1..=n in log.txt once (calls of one response may finish in any order).
fn assert_log(ws: &Path, n: u32, what: &str) {
    let log = std::fs::read_to_string(ws.join("log.txt")).unwrap_or_default();
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort_by_key(|l| l.parse::<u32>().unwrap_or(0));
    let want: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    assert_eq!(lines, want, "{what}: a call ran twice or not at all: {log}");
}

fn assistants(ws: &Path) -> usize {
    let s = session_of(&ws.join("out"));
    s["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

#[test]
fn a_run_stopped_at_its_turn_limit_goes_on_with_what_its_tools_knew() {
    // Read, a background job, then (after the limit) Edit of the file read before and a
    // look at the job, whatever turn the limit falls on.
    let script = [
        turn("{name: Read, arguments: {filepath: calc.sh}}"),
        turn(&echo(1)),
        turn("{name: Bash, arguments: {command: 'sleep 33', run_in_background: true}}"),
        turn(&echo(2)),
        turn("{name: Edit, arguments: {file_path: calc.sh, old_string: '1+1', new_string: '1+2'}}"),
        turn("{name: CheckBackgroundJob, arguments: {job_id: bg-1}}"),
        turn("{name: Bash, arguments: {command: 'true', run_in_background: true}}"),
        turn(&echo(3)),
        "  - text: fixed\n".to_owned(),
    ]
    .concat();
    for limit in [1, 2, 3, 4] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let job = job(&format!("limits: {{max_turns: {limit}}}\n"));
        write_files(
            ws,
            &[
                ("job.yaml", &job),
                ("s.yaml", &script),
                ("calc.sh", "echo $((1+1))\n"),
            ],
        );
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml");
        assert_eq!(run(cmd, Some(&ws.join("out"))).code, 4, "limit {limit}");
        let mut r = resume(ws, &[]);
        let mut resumes = 1;
        while r.code == 4 && resumes < 10 {
            r = resume(ws, &[]);
            resumes += 1;
        }
        let what = format!("limit {limit}, {resumes} resumes");
        assert_eq!(r.code, 0, "{what}: {r:#?}");
        let result = result_json(&r);
        assert_eq!(result["result"], "fixed", "{what}");
        assert_eq!(result["num_turns"], 9, "{what}: the whole run's turns");
        assert_eq!(result["num_tool_calls"], 8, "{what}: the whole run's calls");
        assert_eq!(
            std::fs::read_to_string(ws.join("calc.sh")).unwrap(),
            "echo $((1+2))\n",
            "{what}"
        );
        assert_log(ws, 3, &what);
        assert_eq!(assistants(ws), 9, "{what}: every scripted turn once");
        let s = session_of(&ws.join("out"));
        let history = s["history"].as_array().unwrap();
        let said = |id: &str| {
            history
                .iter()
                .find(|m| m["tool_call_id"] == id)
                .map(|m| m["content"].as_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        assert!(
            said("call_5_0").starts_with("Edited calc.sh"),
            "{what}: {}",
            said("call_5_0")
        );
        let job_seen = said("call_6_0");
        assert!(
            job_seen.contains("\"job_id\": \"bg-1\""),
            "{what}: {job_seen}"
        );
        // The job ended with the process that started it (always an earlier one here).
        assert!(
            job_seen.contains("earlier cn-run process"),
            "{what}: {job_seen}"
        );
        assert!(
            said("call_7_0").contains("background job bg-2"),
            "{what}: ids stay taken"
        );
        procs::kill_in_dir(ws);
    }
}

/// A run of three counting turns stopped with `signal` while its second call (`echo 2`,
/// then a long sleep) runs, once `session.jsonl` holds `logged`; its exit code.
fn stopped_in_a_call(ws: &Path, signal: &str, logged: &str) -> i32 {
    let script = [
        turn(&echo(1)),
        turn("{name: Bash, arguments: {command: 'echo 2 >> log.txt; sleep 47'}}"),
        turn(&echo(3)),
        "  - text: counted\n".to_owned(),
    ]
    .concat();
    write_files(ws, &[("job.yaml", &job("")), ("s.yaml", &script)]);
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--out", "out"]);
    let live = Live::start(cmd, ws, Some(&ws.join("out")));
    assert!(wait_for_text(&ws.join("log.txt"), "2\n"), "{signal}");
    assert!(
        wait_for_text(&ws.join("out/session.jsonl"), logged),
        "{signal}"
    );
    live.signal(signal);
    let code = live.wait().code;
    procs::kill_in_dir(ws);
    code
}

#[test]
fn a_run_interrupted_in_a_call_goes_on_without_running_it_again() {
    for signal in ["INT", "TERM"] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        assert_eq!(stopped_in_a_call(ws, signal, "call_2_0"), 130, "{signal}");
        let r = resume(ws, &[]);
        assert_eq!(r.code, 0, "{signal}: {r:#?}");
        assert_eq!(result_json(&r)["result"], "counted");
        assert_log(ws, 3, signal);
        assert_eq!(assistants(ws), 4, "{signal}");
    }
}

/// An OpenAI-compatible reply with one Bash call echoing `n` into log.txt.
fn echo_reply(n: u32) -> Reply {
    let args = format!("{{\"command\": \"echo {n} >> log.txt\"}}");
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(
        0,
        &format!("call_{n}"),
        "Bash",
        &[args.as_str()],
    ));
    chunks.extend([
        openai::finish("tool_calls"),
        openai::usage(50, 10, 0),
        openai::done(),
    ]);
    Reply::sse(200, chunks)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_stopped_by_its_provider_goes_on_after_the_outage() {
    // The provider refuses the key once (not retried: exit 5); the resume finds it back.
    let server = MockServer::start(vec![
        echo_reply(1),
        Reply::json(
            401,
            &serde_json::json!({"error": {"message": "invalid api key"}}),
        ),
        echo_reply(2),
        Reply::sse(200, openai::answer("counted")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().to_path_buf();
    let job = format!(
        "version: 1\nname: again\nmodel: {{provider: openai, name: test-model, api_base: {}/v1, api_key_env: TEST_KEY}}\nprompt: count\npermissions: {{mode: auto, allow: ['Bash(*)']}}\n",
        server.url()
    );
    write_files(&ws, &[("job.yaml", &job)]);
    let (first, resumed) = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&ws);
        cmd.arg("job.yaml").env("TEST_KEY", "sk-test-0123456789");
        let first = run(cmd, Some(&ws.join("out")));
        let mut cmd = cn_run(&ws);
        cmd.args(["--resume", "out", "--format", "json"])
            .env("TEST_KEY", "sk-test-0123456789");
        let resumed = run(cmd, Some(&ws.join("out")));
        assert_log(&ws, 2, "provider");
        (first, resumed)
    })
    .await
    .unwrap();
    assert_eq!(first.code, 5, "{first:#?}");
    assert_eq!(resumed.code, 0, "{resumed:#?}");
    assert_eq!(result_json(&resumed)["result"], "counted");
    assert_eq!(server.requests().len(), 4);
}

const CHECKS: &str = "checks:\n  - {name: first, run: 'echo first >> checks.log'}\n  - {name: slow, run: 'echo slow >> checks.log; test -e go || sleep 41'}\n  - {name: third, run: 'echo third >> checks.log'}\n";

/// A run that answers at once and is stopped (`signal`) while its second check runs.
fn stopped_in_checks(ws: &Path, signal: &str) -> Run {
    write_files(
        ws,
        &[
            ("job.yaml", &job(CHECKS)),
            ("s.yaml", "turns:\n  - text: done\n"),
        ],
    );
    git_init(ws);
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--out", "out"]);
    let live = Live::start(cmd, ws, Some(&ws.join("out")));
    assert!(wait_for_text(&ws.join("checks.log"), "slow"));
    assert!(procs::wait_for(|| procs::in_dir(ws)
        .iter()
        .any(|p| p.cmdline == "sleep 41")));
    live.signal(signal);
    let r = live.wait();
    procs::kill_in_dir(ws);
    r
}

#[test]
fn a_run_stopped_in_its_checks_goes_on_from_them_without_asking_the_model_again() {
    for signal in ["KILL", "TERM", "INT"] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let stopped = stopped_in_checks(ws, signal);
        assert_eq!(
            stopped.code,
            if signal == "KILL" { -1 } else { 130 },
            "{signal}"
        );
        std::fs::write(ws.join("go"), "").unwrap();
        // The script has no turn left: asking the model again would be exit 5.
        let r = resume(ws, &[]);
        assert_eq!(r.code, 0, "{signal}: {r:#?}");
        let result = result_json(&r);
        assert_eq!(result["result"], "done", "{signal}");
        assert_eq!(result["num_turns"], 1, "{signal}");
        // `first` ended before the stop and is not run again; `slow` and `third` are.
        let log = std::fs::read_to_string(ws.join("checks.log")).unwrap();
        assert_eq!(log, "first\nslow\nslow\nthird\n", "{signal}");
        let checks: Vec<(String, bool)> = result["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["passed"].as_bool().unwrap(),
                )
            })
            .collect();
        let names: Vec<&str> = checks.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            names,
            ["first", "slow", "third"],
            "{signal}: each check once"
        );
        assert!(checks.iter().all(|c| c.1), "{signal}: {checks:?}");
        assert_eq!(assistants(ws), 1, "{signal}");
    }
}

#[test]
fn a_run_killed_before_its_first_checkpoint_still_has_its_whole_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let script = "turns:\n  - delay_ms: 3000\n    tool_calls: [{name: Write, arguments: {filepath: new.txt, content: \"new\\n\"}}]\n  - text: written\n";
    write_files(ws, &[("job.yaml", &job("")), ("s.yaml", script)]);
    git_init(ws);
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--out", "out"]);
    let live = Live::start(cmd, ws, Some(&ws.join("out")));
    // Killed while the first response comes (no snapshot is taken before a call streams in).
    assert!(wait_for_text(&ws.join("out/events.jsonl"), "turn.started"));
    live.signal("KILL");
    live.wait();
    let r = resume(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    let diff = std::fs::read_to_string(ws.join("out/diff.patch")).unwrap();
    assert!(
        diff.contains("+++ b/new.txt") && diff.contains("+new"),
        "{diff}"
    );
    assert_eq!(result_json(&r)["checkpoints"][0]["index"], 0);
}

#[test]
fn a_cut_session_log_does_not_run_a_started_call_again() {
    // Killed while a call runs; the log then loses its last lines (its disk filled, a copy
    // was cut): events.jsonl still says the call started.
    for keep_from_end in [1, 2, 3] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let started = "tools_started\",\"call_ids\":[\"call_2_0\"]";
        assert_eq!(stopped_in_a_call(ws, "KILL", started), -1);
        let path = ws.join("out/session.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("\"tools_started\"") && l.contains("call_2_0"))
            .unwrap();
        let cut = at + 1 - keep_from_end.min(at);
        std::fs::write(&path, lines[..cut].join("\n") + "\n").unwrap();
        let r = resume(ws, &[]);
        assert_eq!(r.code, 0, "cut {keep_from_end}: {r:#?}");
        assert!(
            r.stderr.contains("were added from events.jsonl"),
            "{}",
            r.stderr
        );
        assert_log(ws, 3, "cut log");
        let s = session_of(&ws.join("out"));
        let answered = s["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["tool_call_id"] == "call_2_0")
            .unwrap()
            .clone();
        assert!(
            answered["content"].as_str().unwrap().contains("killed"),
            "{answered}"
        );
    }
}

#[test]
fn a_new_instruction_comes_after_the_results_of_the_calls_left_open() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let script = [
        turn(&format!("{}, {}", echo(1), echo(2))),
        "  - text: more done\n".to_owned(),
    ]
    .concat();
    write_files(ws, &[("job.yaml", &job("")), ("s.yaml", &script)]);
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml")
        .env("CN_RUN_TEST_PANIC", "after_response:1");
    assert_eq!(run(cmd, Some(&ws.join("out"))).code, 6);
    let r = resume(ws, &["-p", "and then?"]);
    assert_eq!(r.code, 0, "{r:#?}");
    let s = session_of(&ws.join("out"));
    let roles: Vec<String> = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m["role"].as_str().unwrap(),
                m["tool_call_id"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            "user ",
            "assistant ",
            "tool call_1_0",
            "tool call_1_1",
            "user ",
            "assistant "
        ],
        "the prompt after the results, never between a call and its result"
    );
    assert_log(ws, 2, "pending calls");
}

#[test]
fn a_damaged_line_in_the_middle_of_the_log_is_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    assert_eq!(stopped_in_a_call(ws, "KILL", "call_2_0"), -1);
    // The config line (line 2) damaged, as a disk error would leave it.
    let path = ws.join("out/session.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert!(lines[1].contains("\"type\":\"config\""), "{}", lines[1]);
    lines[1] = "{\"type\":\"config\",\"val\u{0}".to_owned();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    // (Not replayed: the damaged line is in the log for good.)
    let out = cn_run(ws).args(["--resume", "out"]).output().unwrap();
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        out: None,
    };
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr.contains("line 2: not a session item") && r.stderr.contains("skipped"),
        "{}",
        r.stderr
    );
    assert_log(ws, 3, "damaged line");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_while_writing_its_outputs_finishes_them_on_resume() {
    // Killed in its final upload (the server takes the log with its `finished` line and
    // never answers): the resume neither asks the model nor runs the check again, and
    // writes what the killed process did not.
    let hung = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let first = hung.clone();
    let server = MockServer::start_with(move |r| {
        let last = String::from_utf8_lossy(&r.body).contains("\"type\":\"finished\"");
        if last && !first.swap(true, std::sync::atomic::Ordering::SeqCst) {
            Reply::text(200, "text/plain", "ok").hang()
        } else {
            Reply::text(200, "text/plain", "ok")
        }
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().to_path_buf();
    let job = job(
        "checks: [{name: once, run: 'echo ran >> checks.log'}]\nupload: {url_env: UP_URL, interval: 1h}\n",
    );
    let url = format!("{}/s/{{run_id}}", server.url());
    write_files(
        &ws,
        &[("job.yaml", &job), ("s.yaml", "turns:\n  - text: done\n")],
    );
    let requests = server.clone_requests();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&ws);
        cmd.args(["job.yaml", "--out", "out"]).env("UP_URL", &url);
        let live = Live::start(cmd, &ws, Some(&ws.join("out")));
        let last = |r: &crate::support::http::RecordedRequest| {
            String::from_utf8_lossy(&r.body).contains("\"type\":\"finished\"")
        };
        assert!(procs::wait_for(|| requests().iter().any(last)));
        live.signal("KILL");
        live.wait();
        assert!(!ws.join("out/result.json").exists());
        let mut cmd = cn_run(&ws);
        cmd.args(["--resume", "out", "--format", "json"])
            .env("UP_URL", &url);
        let r = run(cmd, Some(&ws.join("out")));
        assert_eq!(
            std::fs::read_to_string(ws.join("checks.log")).unwrap(),
            "ran\n"
        );
        r
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    let result = result_json(&r);
    assert_eq!(result["result"], "done");
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["upload"]["ok"], true, "{result}");
    assert!(hung.load(std::sync::atomic::Ordering::SeqCst));
}
