//! Nothing secret leaves by an MCP tool: a call whose arguments carry a registered secret, in
//! any spelling the Fetch egress test uses (plain, base64, base64url, hex, URL-encoded,
//! reversed…), is refused with `secret.egress` and reported as a denial, and the fixture
//! server never receives it (its `write_file` tool would leave the file behind).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::secrets_e2e::encodings;
use crate::support::runner::{cn_run, run, write_files};

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

#[test]
fn no_spelling_of_a_secret_reaches_an_mcp_server() {
    let secret = "ghp_McpPlantedEgressToken1357924680";
    let cases = encodings(secret);
    let mut calls: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, (_, text))| {
            json!({"name": "mcp__fx__write_file", "id": format!("leak{i}"),
                   "arguments": {"path": format!("leak{i}.txt"), "text": text}})
        })
        .collect();
    // The control: a call without the secret does reach the server and writes its file.
    calls.push(json!({"name": "mcp__fx__write_file", "id": "control",
                      "arguments": {"path": "control.txt", "text": "harmless"}}));
    let script = json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}).to_string();
    let job = format!(
        "version: 1\nname: mcp-egress\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\npermissions: {{allow: [mcp__fx__write_file]}}\nmcp_servers:\n  fx:\n    command: {}\n",
        fixture().display()
    );
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path(), &[("job.yaml", &job), ("s.json", &script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml").env("GH_DEPLOY_TOKEN", secret);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("control.txt")).unwrap(),
        "harmless",
        "the control call reached the server"
    );
    for (i, (what, _)) in cases.iter().enumerate() {
        assert!(
            !tmp.path().join(format!("leak{i}.txt")).exists(),
            "{what}: the server received the call"
        );
    }
    let denials = r.result()["permission_denials"].as_array().unwrap().clone();
    assert_eq!(denials.len(), cases.len(), "{denials:#?}");
    for (i, (d, (what, _))) in denials.iter().zip(&cases).enumerate() {
        assert_eq!(d["tool_name"], "mcp__fx__write_file", "{what}: {d}");
        assert_eq!(d["tool_use_id"], format!("leak{i}"), "{what}: {d}");
        assert!(d.to_string().contains("secret.egress"), "{what}: {d}");
        assert!(!d.to_string().contains(secret), "{what}: {d}");
    }
    assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
}
