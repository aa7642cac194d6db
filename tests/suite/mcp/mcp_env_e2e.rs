//! What a stdio MCP server sees of the runner's environment: PATH, HOME and the locale, and
//! what the job names in the server's `env:` (by value or as `${VAR}`), nothing else. Planted
//! secrets are asked for by name through the fixture's `env` tool and must come back unset,
//! and their values must appear in no output of the run.

use std::path::PathBuf;

use crate::support::runner::{cn_run, files_under, run, write_files};

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

/// Secret-looking and ordinary variables of the runner that no server was given.
const PLANTED: [(&str, &str); 8] = [
    ("AWS_SECRET_ACCESS_KEY", "planted-aws-9f3k2"),
    ("AWS_ACCESS_KEY_ID", "AKIAPLANTED00000000"),
    ("GITHUB_TOKEN", "ghp_planted0000000000000000000000000000"),
    ("NPM_TOKEN", "npm_planted_token_7781"),
    ("OPENAI_API_KEY", "sk-planted-openai-5521"),
    ("DATABASE_URL", "postgres://u:planted-db-pw@db/x"),
    ("SSH_AUTH_SOCK", "/tmp/planted-agent.sock"),
    ("CI_PLAIN_SETTING", "planted-plain-value"),
];

#[test]
fn a_stdio_server_sees_only_path_home_locale_and_its_declared_env() {
    let tmp = tempfile::tempdir().unwrap();
    let mut calls: Vec<String> = PLANTED
        .iter()
        .map(|(name, _)| format!("{{name: mcp__fx__env, id: {name}, arguments: {{name: {name}}}}}"))
        .collect();
    for name in [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "FX_LITERAL",
        "FX_FROM_RUNNER",
    ] {
        calls.push(format!(
            "{{name: mcp__fx__env, id: {name}, arguments: {{name: {name}}}}}"
        ));
    }
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: [mcp__fx__env]}}\nmcp_servers:\n  fx:\n    command: {}\n    env:\n      FX_LITERAL: given-by-value\n      FX_FROM_RUNNER: ${{RUNNER_SIDE}}\n",
        fixture().display()
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml")
        .arg("--format")
        .arg("stream-json")
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("RUNNER_SIDE", "passed-by-name");
    for (name, value) in PLANTED {
        cmd.env(name, value);
    }
    let out = tmp.path().join("out");
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let finished = r.events_of("tool.finished");
    let output = |id: &str| {
        finished
            .iter()
            .find(|e| e["call_id"] == id)
            .unwrap_or_else(|| panic!("{id}: {finished:#?}"))["output"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for (name, _) in PLANTED {
        assert_eq!(output(name), "(unset)", "{name} reached the server");
    }
    assert_eq!(output("PATH"), std::env::var("PATH").unwrap());
    assert_eq!(output("HOME"), tmp.path().display().to_string());
    assert_eq!(output("LANG"), "C.UTF-8");
    assert_eq!(output("LC_ALL"), "C.UTF-8");
    assert_eq!(output("FX_LITERAL"), "given-by-value");
    // A value taken from the runner's environment (`${VAR}`) is a registered secret, so the
    // server's answer shows it masked: masked means it arrived ("(unset)" otherwise).
    assert_eq!(output("FX_FROM_RUNNER"), "[REDACTED]");
    let mut everything = r.stdout.clone() + &r.stderr;
    for entry in files_under(&out) {
        everything.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap()));
    }
    for (name, value) in PLANTED {
        assert!(
            !everything.contains(value),
            "{name}'s value is in the run's output"
        );
    }
}
