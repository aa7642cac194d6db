//! A job whose `mcp_servers` cannot be expanded (an unset `${NAME}` or an unclosed `${` in a
//! server's command, args, env, url or headers) is a wrong job: exit 2, the setting named,
//! and no run folder left behind — neither by `cn-run JOB` nor by the runs `cn-run
//! schedule` starts (which used to leave an empty `.cn-run/<run>` per attempt).

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{cn_run, run, write_files};

/// (the server's settings, the words stderr or the run's log must say)
const CASES: [(&str, &str); 7] = [
    (
        "command: \"${MISSING_CMD_DIR}/server\"",
        "mcp_servers.srv.command: environment variable MISSING_CMD_DIR is not set",
    ),
    (
        "command: /bin/true\n    args: [\"--root\", \"${MISSING_ARG}\"]",
        "mcp_servers.srv.args[1]: environment variable MISSING_ARG is not set",
    ),
    (
        "command: /bin/true\n    env: {TOKEN: \"${MISSING_ENV}\"}",
        "mcp_servers.srv.TOKEN: environment variable MISSING_ENV is not set",
    ),
    (
        "url: \"http://${MISSING_HOST}/mcp\"",
        "mcp_servers.srv.url: environment variable MISSING_HOST is not set",
    ),
    (
        "url: http://127.0.0.1:9/mcp\n    headers: {Authorization: \"Bearer ${MISSING_TOKEN}\"}",
        "mcp_servers.srv.Authorization: environment variable MISSING_TOKEN is not set",
    ),
    (
        "command: /bin/true\n    args: [\"${UNCLOSED\"]",
        "mcp_servers.srv.args[0]: unclosed `${` in `${UNCLOSED`",
    ),
    (
        "url: \"http://${MISSING_URL_HOST}:${MISSING_URL_PORT}/mcp\"",
        "mcp_servers.srv.url: environment variable MISSING_URL_HOST is not set",
    ),
];

fn job(server: &str, schedule: bool) -> String {
    let when = if schedule {
        "schedule: \"* * * * *\"\n"
    } else {
        ""
    };
    format!(
        "version: 1\nname: expand\nmodel: {{provider: script, name: m, script: s.yaml}}\n\
         prompt: go\n{when}mcp_servers:\n  srv:\n    {server}\n"
    )
}

/// The run folders under `dir/.cn-run` (its `.gitignore` and the scheduler's state aside).
fn run_folders(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir.join(".cn-run")) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .filter(|e| e.path().is_dir() && e.file_name() != "schedule")
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn an_unexpandable_mcp_server_is_exit_2_and_leaves_no_run_folder() {
    for (server, words) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let script = "turns:\n  - text: done\n";
        write_files(ws, &[("job.yaml", &job(server, false)), ("s.yaml", script)]);
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml");
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{server}: {r:#?}");
        assert!(r.stderr.contains(words), "{server}: {}", r.stderr);
        assert_eq!(run_folders(ws), Vec::<String>::new(), "{server}");
    }
}

#[test]
fn a_scheduled_run_of_an_unexpandable_mcp_server_leaves_no_run_folder() {
    for (server, words) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let script = "turns:\n  - text: done\n";
        write_files(
            dir,
            &[("jobs/j.yaml", &job(server, true)), ("jobs/s.yaml", script)],
        );
        let mut cmd = cn_run(dir);
        cmd.args(["schedule", "--once", "jobs"]);
        let r = run(cmd, None);
        let beat = dir.join("jobs/.cn-run/schedule/heartbeat.json");
        let beat: Value = serde_json::from_str(&std::fs::read_to_string(beat).unwrap()).unwrap();
        let last = &beat["jobs"][0]["last_result"];
        assert_eq!(last["exit_code"], 2, "{server}: {beat:#}\n{r:#?}");
        let log = std::fs::read_to_string(last["log"].as_str().unwrap()).unwrap();
        assert!(log.contains(words), "{server}: {log}");
        assert_eq!(run_folders(dir), Vec::<String>::new(), "{server}");
    }
}

/// The expanded values are the ones used: a server whose command and args come from
/// `${NAME}` starts (unexpanded, `${FX_DIR}/mcp_fixture` is no program and the run would
/// fail with exit 6).
#[test]
fn set_variables_in_command_and_args_are_expanded() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    let fixture = bin.parent().unwrap().join("examples");
    let server = "command: \"${FX_DIR}/mcp_fixture\"\n    args: [\"--delay\", \"${FX_MS}\"]";
    let script = "turns:\n  - text: done\n";
    write_files(ws, &[("job.yaml", &job(server, false)), ("s.yaml", script)]);
    let out = ws.join("out");
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml")
        .arg("--out")
        .arg(&out)
        .env("FX_DIR", &fixture)
        .env("FX_MS", "1");
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["mcp_servers"][0]["name"], "srv", "{result:#}");
    assert_eq!(result["mcp_servers"][0]["status"], "ready", "{result:#}");
}
