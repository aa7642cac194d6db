//! An MCP write tool that a rule allows is still bound by the workspace and credential-file
//! rules of the built-in Write: the fixture's `write_file` (which reads `file://` URIs and
//! `~/` as a filesystem server does) leaves no file outside the workspace and changes no
//! credential file, at every spelling of the path, while a file inside is written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::runner::{Run, cn_run, run, write_files};

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

/// Runs a job in `ws` allowing `rule`, with one turn of `write_file` calls (id, path), with
/// HOME set to `home`.
fn run_writes(ws: &Path, home: &Path, rule: &str, tool: &str, calls: &[(String, String)]) -> Run {
    let calls: String = calls
        .iter()
        .map(|(id, path)| {
            format!(
                "      - {{name: {tool}, id: {id}, arguments: {{path: '{path}', text: planted}}}}\n"
            )
        })
        .collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\npermissions: {{allow: ['{rule}']}}\nmcp_servers:\n  fx:\n    command: {}\n",
        fixture().display()
    );
    write_files(ws, &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").env("HOME", home);
    run(cmd, Some(&ws.join("out")))
}

fn denied(r: &Run, id: &str) -> Value {
    r.result()["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool_use_id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

struct Scene {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    home: PathBuf,
}

/// A workspace with `.env` and a symlink `link` to a folder outside it, and a home folder
/// (outside it too) with `.ssh/authorized_keys`.
fn scene() -> Scene {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, outside, home) = (root.join("ws"), root.join("outside"), root.join("home"));
    for dir in [&ws, &outside, &home.join(".ssh"), &ws.join("sub")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(ws.join(".env"), "ORIGINAL=1\n").unwrap();
    std::fs::write(home.join(".ssh/authorized_keys"), "ORIGINAL\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    Scene {
        _tmp: tmp,
        ws,
        outside,
        home,
    }
}

#[test]
fn an_allowed_mcp_write_tool_writes_nothing_outside_the_workspace_at_any_spelling() {
    let s = scene();
    let out = s.outside.display();
    let spellings = [
        ("dotdot", "../outside/m1".to_owned()),
        ("absolute", format!("{out}/m2")),
        ("symlink", "link/m3".to_owned()),
        ("file_uri", format!("file://{out}/m4")),
        ("tilde", "~/m5".to_owned()),
        ("nested_dotdot", "sub/../../outside/m6".to_owned()),
        ("inside", "inside.txt".to_owned()),
    ];
    let calls: Vec<(String, String)> = spellings
        .iter()
        .map(|(id, p)| ((*id).to_owned(), p.clone()))
        .collect();
    let r = run_writes(
        &s.ws,
        &s.home,
        "mcp__fx__write_file",
        "mcp__fx__write_file",
        &calls,
    );
    assert_eq!(r.code, 0, "{r:#?}");
    // The rule does allow the tool: the file inside the workspace is written.
    assert_eq!(
        std::fs::read_to_string(s.ws.join("inside.txt")).unwrap_or_default(),
        "planted",
        "{r:#?}"
    );
    assert!(denied(&r, "inside").is_null());
    for name in ["m1", "m2", "m3", "m4", "m6"] {
        assert!(!s.outside.join(name).exists(), "{name} was written outside");
    }
    assert!(!s.home.join("m5").exists(), "~/m5 was written");
    for (id, _) in &spellings[..6] {
        let d = denied(&r, id);
        assert_eq!(d["resolution"], "denied", "{id}: {r:#?}");
        assert_eq!(d["rule"], "tool.write_outside_workspace", "{id}: {d:#}");
    }
}

#[test]
fn an_allowed_mcp_write_tool_changes_no_credential_file_at_any_spelling() {
    let s = scene();
    let ws = s.ws.display();
    let spellings = [
        ("env", ".env".to_owned()),
        ("env_abs", format!("{ws}/.env")),
        ("env_uri", format!("file://{ws}/.env")),
        ("env_dot", "./sub/../.env".to_owned()),
        ("ssh_tilde", "~/.ssh/authorized_keys".to_owned()),
        ("npmrc", "sub/.npmrc".to_owned()),
        ("key", "sub/deploy.pem".to_owned()),
        ("git", ".git/config".to_owned()),
    ];
    std::fs::create_dir_all(s.ws.join(".git")).unwrap();
    let calls: Vec<(String, String)> = spellings
        .iter()
        .map(|(id, p)| ((*id).to_owned(), p.clone()))
        .collect();
    let r = run_writes(&s.ws, &s.home, "mcp__fx__*", "mcp__fx__write_file", &calls);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".env")).unwrap(),
        "ORIGINAL=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.home.join(".ssh/authorized_keys")).unwrap(),
        "ORIGINAL\n"
    );
    for name in ["sub/.npmrc", "sub/deploy.pem", ".git/config"] {
        assert!(!s.ws.join(name).exists(), "{name} was written");
    }
    for (id, _) in &spellings {
        let d = denied(&r, id);
        assert_eq!(d["resolution"], "denied", "{id}: {r:#?}");
    }
}
