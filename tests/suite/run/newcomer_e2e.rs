//! What a newcomer meets first, from the binary: `--quiet` keeps a one-line outcome (a
//! bad key, a refused sandbox, a success); stdout holds nothing but a complete answer (a
//! run stopped by a limit or a signal prints none of its half sentence); a retry is logged
//! once; the flags people bring from `claude -p` and `codex exec` are taken or pointed at
//! cn-run's own; `validate` says every problem of a file in one pass; parallel jobs' logs
//! come as one group each in GitHub Actions.

use std::path::Path;

use serde_json::json;

use crate::support::http::{MockServer, Reply};
use crate::support::procs::{kill_in_dir, wait_for};
use crate::support::runner::{Run, cn_run, run, without_user_namespaces, write_files};
use crate::support::sse::openai;

fn script_job(dir: &Path, name: &str, rest: &str, script: &str) {
    write_files(
        dir,
        &[
            (
                &format!("{name}.yaml"),
                &format!(
                    "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: {name}.s.yaml}}\nprompt: go\n{rest}"
                ),
            ),
            (&format!("{name}.s.yaml"), script),
        ],
    );
}

fn openai_job(dir: &Path, url: &str) {
    write_files(
        dir,
        &[(
            "oa.yaml",
            &format!(
                "version: 1\nname: oa\nmodel:\n  provider: openai\n  name: gpt-4o\n  api_base: {url}/v1\n  api_key_env: TEST_OPENAI_KEY\n  retry: {{max_retries: 3, initial_delay: 10ms}}\nprompt: look around\n"
            ),
        )],
    );
}

async fn run_openai(dir: &Path, extra: &[&str]) -> Run {
    let (dir, extra): (std::path::PathBuf, Vec<String>) = (
        dir.to_path_buf(),
        extra.iter().map(|s| s.to_string()).collect(),
    );
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("oa.yaml")
            .args(&extra)
            .env("TEST_OPENAI_KEY", "sk-test-KEY-0123456789");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap()
}

/// The one line `--quiet` keeps: `[job] STATUS after …: REASON`.
fn only_outcome(r: &Run, job: &str, status: &str) -> String {
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line with --quiet:\n{}", r.stderr);
    assert!(
        lines[0].starts_with(&format!("[{job}] {status} after ")),
        "{}",
        lines[0]
    );
    lines[0].to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn quiet_keeps_a_one_line_outcome_for_a_bad_key() {
    let server = MockServer::start_with(|_| {
        Reply::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
        )
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    openai_job(tmp.path(), &server.url());
    let r = run_openai(tmp.path(), &["--quiet"]).await;
    assert_eq!(r.code, 5, "{r:#?}");
    let line = only_outcome(&r, "oa", "provider_error");
    assert!(line.contains("401"), "{line}");
    assert!(!line.contains("sk-test-KEY"), "{line}");
    assert_eq!(r.stdout, "", "no answer, nothing on stdout");
}

#[test]
fn quiet_keeps_a_one_line_outcome_for_a_success_and_a_refused_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    script_job(tmp.path(), "fine", "", "turns:\n  - text: all done\n");
    let mut cmd = cn_run(tmp.path());
    cmd.args(["fine.yaml", "--quiet"]);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    only_outcome(&r, "fine", "success");
    assert_eq!(r.stdout, "all done\n");

    // Where bubblewrap cannot start (no user namespaces, no capabilities) and the job
    // requires the sandbox: exit 6, said in one line.
    let tmp = tempfile::tempdir().unwrap();
    script_job(tmp.path(), "strict", "", "turns:\n  - text: never\n");
    let args = [
        "strict.yaml",
        "--require-sandbox",
        "--quiet",
        "--out",
        "out",
    ];
    let Some(r) = without_user_namespaces(tmp.path(), &args, &[]) else {
        return;
    };
    if !r.stderr.contains("[strict]") {
        eprintln!("SKIPPED (no user namespaces here): {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 6, "{r:#?}");
    let line = only_outcome(&r, "strict", "internal_error");
    assert!(line.contains("require_sandbox"), "{line}");
}

/// A turn that says half a sentence, then a call: the run is stopped before it finishes.
const HALF: &str = "turns:\n  - text: 'I will now fix the'\n    tool_calls: [{name: Bash, arguments: {command: 'sleep 300'}}]\n  - text: never\n";

#[test]
fn stdout_holds_no_half_answer_when_a_limit_or_a_signal_stops_the_run() {
    // A limit.
    let tmp = tempfile::tempdir().unwrap();
    script_job(
        tmp.path(),
        "limited",
        "limits: {max_turns: 1}\n",
        &HALF.replace("sleep 300", "true"),
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg("limited.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 4, "{r:#?}");
    assert_eq!(r.stdout, "", "half an answer on stdout");
    assert_eq!(
        r.result()["result"],
        "I will now fix the",
        "kept in result.json"
    );

    // A signal while the call runs.
    for sig in ["-INT", "-TERM"] {
        let tmp = tempfile::tempdir().unwrap();
        script_job(
            tmp.path(),
            "stopped",
            "permissions: {allow: ['Bash(sleep *)']}\n",
            HALF,
        );
        let child = cn_run(tmp.path())
            .args(["stopped.yaml", "--out", "out"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let events = tmp.path().join("out/events.jsonl");
        assert!(wait_for(
            || std::fs::read_to_string(&events).is_ok_and(|e| e.contains("\"tool.started\""))
        ));
        let _ = std::process::Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        kill_in_dir(tmp.path());
        assert_eq!(out.status.code(), Some(130), "{sig}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{sig}");
    }

    // The control: a run that finishes prints its whole answer.
    let tmp = tempfile::tempdir().unwrap();
    script_job(
        tmp.path(),
        "whole",
        "",
        "turns:\n  - text: 'I fixed the bug.'\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg("whole.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!((r.code, r.stdout.as_str()), (0, "I fixed the bug.\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn each_retry_is_logged_once() {
    let server = MockServer::start(vec![
        Reply::json(503, &json!({"error": {"message": "upstream unavailable"}})),
        Reply::json(503, &json!({"error": {"message": "upstream unavailable"}})),
        Reply::sse(200, openai::answer("done")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    openai_job(tmp.path(), &server.url());
    let r = run_openai(tmp.path(), &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let said: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("upstream unavailable"))
        .collect();
    assert_eq!(said.len(), 2, "one line per retry:\n{}", r.stderr);
    assert!(
        said[0].contains("retry 1 in") && said[1].contains("retry 2 in"),
        "{said:?}"
    );
}

#[test]
fn flags_from_claude_and_codex_are_taken_or_pointed_at_cn_runs_own() {
    let tmp = tempfile::tempdir().unwrap();
    script_job(tmp.path(), "j", "", "turns:\n  - text: all done\n");
    let go = |args: &[&str]| {
        let mut cmd = cn_run(tmp.path());
        cmd.arg("j.yaml").args(args);
        run(cmd, None)
    };
    // claude -p's --output-format: the result object.
    let r = go(&["--output-format", "json", "--quiet"]);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["type"], "result");
    // codex exec's --json: one event per line.
    let r = go(&["--json", "--quiet"]);
    let first: serde_json::Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "run.started");
    // codex exec's --cd and --full-auto.
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    let r = go(&["--cd", "sub", "--full-auto", "--format", "json", "--quiet"]);
    let result: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        result["workspace"].as_str().unwrap().ends_with("/sub"),
        "{result}"
    );
    // claude -p's --continue: the latest run, resumed.
    let r = go(&["--quiet"]);
    assert_eq!(r.code, 0);
    let mut cmd = cn_run(tmp.path());
    cmd.args([
        "--continue",
        "-p",
        "and again",
        "--format",
        "json",
        "--quiet",
    ]);
    let r = run(cmd, None);
    assert_ne!(r.code, 2, "--continue is taken: {r:#?}");
    // Refused, pointing at cn-run's own; nothing runs.
    let runs_before = std::fs::read_dir(tmp.path().join(".cn-run"))
        .unwrap()
        .count();
    for (flag, pointer) in [
        (vec!["--dangerously-skip-permissions"], "--auto"),
        (vec!["--allowedTools", "Bash(git:*) Edit"], "--allow"),
        (vec!["--permission-mode", "bypassPermissions"], "--auto"),
        (
            vec!["--sandbox", "danger-full-access"],
            "tools.bash.sandbox",
        ),
    ] {
        let r = go(&flag);
        assert_eq!(r.code, 2, "{flag:?}: {r:#?}");
        assert!(
            r.stderr
                .contains(&format!("{} is not a cn-run flag", flag[0]))
                && r.stderr.contains(pointer),
            "{}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("tip:"),
            "clap's guess instead of the pointer: {}",
            r.stderr
        );
    }
    assert_eq!(
        std::fs::read_dir(tmp.path().join(".cn-run"))
            .unwrap()
            .count(),
        runs_before
    );
}

#[test]
fn validate_reports_every_problem_of_a_file_in_one_pass() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("s.yaml", "turns:\n  - text: hi\n"),
            (
                "multi.yaml",
                "version: 1\nname: multi\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: 'fix {{ params.pth }} now'\nparams:\n  path: {default: src}\nlimits: {max_turns: lots}\ncolour: red\nchecks:\n  - {name: c, run: 'lint {{ params.paht }}'}\n",
            ),
            (
                "two.yaml",
                "version: 2\nname: two\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\npermissions: {on_ask: sometimes}\nrules: [{file: missing-rules.md}]\n",
            ),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "multi.yaml", "two.yaml", "--param", "pat=x"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    for (at, says) in [
        (
            "multi.yaml:4:",
            "`params.pth`, which is not a declared parameter; did you mean `path`?",
        ),
        (
            "multi.yaml:6:",
            "--param pat=… sets a parameter the job does not declare (declared: path); did you mean `path`?",
        ),
        ("multi.yaml:7:", "limits.max_turns: expected an integer"),
        ("multi.yaml:8:", "colour: unknown field"),
        (
            "multi.yaml:10:",
            "`params.paht`, which is not a declared parameter; did you mean `path`?",
        ),
        ("two.yaml:5:", "permissions.on_ask"),
        ("two.yaml:1:", "unsupported version 2"),
    ] {
        assert!(
            r.stderr
                .lines()
                .any(|l| l.starts_with(at) && l.contains(says)),
            "{at} {says}:\n{}",
            r.stderr
        );
    }
}

/// In GitHub Actions, several jobs at once: each job's lines are one group, written when
/// it ends, so no group holds another job's lines; a lone job keeps a group per turn.
#[test]
fn parallel_jobs_log_one_group_each_in_actions() {
    let tmp = tempfile::tempdir().unwrap();
    let turns = "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: done\n";
    let names = ["alpha", "beta", "gamma", "delta"];
    for name in names {
        script_job(tmp.path(), name, "", turns);
    }
    let mut cmd = cn_run(tmp.path());
    cmd.env("GITHUB_ACTIONS", "true")
        .args(["--parallel", "4", "--isolate", "none"])
        .args(names.map(|n| format!("{n}.yaml")));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let mut open: Option<&str> = None;
    let mut groups = Vec::new();
    for line in r.stderr.lines() {
        if let Some(title) = line.strip_prefix("::group::") {
            assert!(open.is_none(), "a group inside a group:\n{}", r.stderr);
            let job = title.split(' ').next().unwrap();
            open = Some(job);
            groups.push(job.to_owned());
        } else if line == "::endgroup::" {
            assert!(
                open.take().is_some(),
                "an end without a group:\n{}",
                r.stderr
            );
        } else if let Some(job) = open {
            assert!(
                line.starts_with(&format!("[{job}]")),
                "{line:?} in {job}'s group:\n{}",
                r.stderr
            );
        }
    }
    groups.sort();
    assert_eq!(groups, ["alpha", "beta", "delta", "gamma"], "{}", r.stderr);

    let mut cmd = cn_run(tmp.path());
    cmd.env("GITHUB_ACTIONS", "true").arg("alpha.yaml");
    let r = run(cmd, Some(&tmp.path().join("lone")));
    assert_eq!(
        r.stderr.matches("::group::alpha turn ").count(),
        3,
        "{}",
        r.stderr
    );
}

/// `explain` and `check-command` probe the sandbox as a run does: where bubblewrap cannot
/// start they say commands are not contained (and builds need permission), as the run
/// then judges them; the control, where it starts, says contained.
#[test]
fn explain_and_check_command_say_what_this_machine_enforces() {
    let tmp = tempfile::tempdir().unwrap();
    script_job(tmp.path(), "j", "", "turns:\n  - text: hi\n");
    let Some(judged) = without_user_namespaces(tmp.path(), &["check-command", "cargo test"], &[])
    else {
        return;
    };
    assert_eq!(judged.code, 1, "{judged:#?}");
    assert!(judged.stdout.contains("build.uncontained"), "{judged:#?}");
    assert!(
        judged
            .stderr
            .contains("this machine does not contain commands fully"),
        "{judged:#?}"
    );
    let asked = without_user_namespaces(
        tmp.path(),
        &["check-command", "--contained", "cargo test"],
        &[],
    )
    .unwrap();
    assert_eq!(asked.code, 0, "{asked:#?}");
    let explained = without_user_namespaces(tmp.path(), &["explain", "j.yaml"], &[]).unwrap();
    assert!(
        explained.stdout.contains("NOT fully enforced here"),
        "{}",
        explained.stdout
    );
    assert!(
        explained.stdout.contains("bash commands: not contained"),
        "{}",
        explained.stdout
    );
    assert!(
        !explained.stdout.contains("enforced here by"),
        "{}",
        explained.stdout
    );
    let json = without_user_namespaces(tmp.path(), &["explain", "--json", "j.yaml"], &[]).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        !json["containment"]["missing"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{json}"
    );
    assert_eq!(json["commands"]["contained"], false);

    // The control: here, where bubblewrap starts.
    let mut cmd = cn_run(tmp.path());
    cmd.args(["explain", "j.yaml"]);
    let r = run(cmd, None);
    if r.stdout.contains("NOT fully enforced here") {
        eprintln!("SKIPPED the control: bubblewrap cannot start here either");
        return;
    }
    assert!(
        r.stdout.contains("enforced here by bubblewrap"),
        "{}",
        r.stdout
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["check-command", "cargo test"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr.contains("bubblewrap contains commands here"),
        "{r:#?}"
    );
}

/// The install layout: `cargo install` puts cn-run and cn-run-call side by side, and a run
/// supervises each command with cn-run-call; a cn-run alone (copied without its partner)
/// still runs contained commands, supervising them with itself.
#[test]
fn cn_run_runs_contained_commands_with_or_without_cn_run_call_beside_it() {
    let bin = Path::new(env!("CARGO_BIN_EXE_cn-run"));
    for partner in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bin");
        std::fs::create_dir(&dir).unwrap();
        let place = |from: &Path, to: &Path| {
            if std::fs::hard_link(from, to).is_err() {
                std::fs::copy(from, to).unwrap();
            }
        };
        place(bin, &dir.join("cn-run"));
        if partner {
            place(&bin.with_file_name("cn-run-call"), &dir.join("cn-run-call"));
        }
        let ws = tmp.path().join("ws");
        script_job(
            &ws,
            "installed",
            "permissions: {allow: ['Bash(echo *)']}\n",
            "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo inside-$$'}}]\n  - text: done\n",
        );
        let out = std::process::Command::new(dir.join("cn-run"))
            .args([
                "installed.yaml",
                "--out",
                "out",
                "--quiet",
                "--format",
                "json",
            ])
            .current_dir(&ws)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .env("HOME", &ws)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "partner {partner}: {out:?}");
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let events = std::fs::read_to_string(ws.join("out/events.jsonl")).unwrap();
        assert!(events.contains("inside-"), "the command ran: {events}");
        if result["sandbox"]["missing"]
            .as_array()
            .is_some_and(Vec::is_empty)
        {
            // Contained either way, where bubblewrap starts.
            assert_eq!(result["sandbox"]["mechanism"], "bubblewrap", "{result}");
        }
    }
}
