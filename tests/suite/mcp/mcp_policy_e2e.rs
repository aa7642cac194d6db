//! MCP tools under least privilege, shown by what a server did or did not do: the fixture's
//! `write_file` (not annotated read-only) leaves no file unless a rule allows it by name,
//! `--readonly` and plan mode change nothing through MCP even with such a rule, read-only
//! tools run with no rule, and untrusted mode needs a rule that names the tool.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::runner::{Run, cn_run, run, write_files};

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

/// A job in `dir` with the fixture as server `fx`, `permissions` as given, and one turn
/// making `calls` (YAML flow items), then a final answer.
fn job(dir: &Path, permissions: &str, calls: &[String]) -> PathBuf {
    let servers = format!("  fx:\n    command: {}\n", fixture().display());
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: use the tools\n{permissions}\nmcp_servers:\n{servers}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", &script)]);
    dir.join("job.yaml")
}

fn write_call(id: &str, path: &Path) -> String {
    format!(
        "{{name: mcp__fx__write_file, id: {id}, arguments: {{path: '{}', text: planted}}}}",
        path.display()
    )
}

fn run_job(dir: &Path, job: &Path, flags: &[&str]) -> Run {
    let mut cmd = cn_run(dir);
    cmd.arg(job).args(flags);
    run(cmd, Some(&dir.join("out")))
}

/// The `tool.finished` output of call `id`.
fn output(r: &Run, id: &str) -> String {
    r.events_of("tool.finished")
        .iter()
        .find(|e| e["call_id"] == id)
        .unwrap_or_else(|| panic!("no tool.finished for {id}: {r:#?}"))["output"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn denial<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("call {id} was not denied: {result:#}"))
}

/// Targets a write tool must not reach without a rule: in the workspace, a dotfile with
/// credentials, a nested new file, the job file itself, and outside the workspace.
fn targets(ws: &Path, outside: &Path) -> Vec<PathBuf> {
    vec![
        ws.join("marker.txt"),
        ws.join(".env"),
        ws.join("sub/dir/new.rs"),
        ws.join("job.yaml"),
        outside.join("escaped.txt"),
    ]
}

#[test]
fn without_a_rule_no_mcp_write_tool_leaves_a_file_and_the_denial_says_how_to_allow_it() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::create_dir_all(ws.join("sub/dir")).unwrap();
    let targets = targets(ws, outside.path());
    let calls: Vec<String> = targets
        .iter()
        .enumerate()
        .map(|(i, p)| write_call(&format!("w{i}"), p))
        .collect();
    let j = job(ws, "", &calls);
    let job_text = std::fs::read_to_string(&j).unwrap();
    let r = run_job(ws, &j, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    for (i, path) in targets.iter().enumerate() {
        let id = format!("w{i}");
        if path.ends_with("job.yaml") {
            assert_eq!(std::fs::read_to_string(path).unwrap(), job_text);
        } else {
            assert!(!path.exists(), "{} was written", path.display());
        }
        let result = r.result();
        let d = denial(&result, &id);
        assert_eq!(d["tool_name"], "mcp__fx__write_file");
        // A credential file or a path outside the workspace is also bound by Write's path
        // rules (mcp_paths_e2e): no rule naming the tool would allow it, so none is hinted.
        let path_bound = path.ends_with(".env") || path.starts_with(outside.path());
        if path_bound {
            assert!(d["allow_hint"].is_null(), "{d:#}");
            assert!(d["reason"].as_str().unwrap().contains("tool."), "{d:#}");
        } else {
            assert_eq!(d["allow_hint"], "mcp__fx__write_file", "{d:#}");
        }
        // A write outside the workspace is decided by the objection only a rule naming
        // the path answers (auto mode and on_ask: allow never do).
        let rule = match path.starts_with(outside.path()) {
            true => "tool.write_outside_workspace",
            false => "mcp__*",
        };
        assert_eq!(d["rule"], rule, "{d:#}");
        assert!(
            output(&r, &id).contains("mcp__fx__write_file"),
            "{}",
            output(&r, &id)
        );
    }
}

#[test]
fn every_tool_not_declared_read_only_is_denied_without_a_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let calls = [
        "{name: mcp__fx__add, id: c1, arguments: {a: 1, b: 2}}",
        "{name: mcp__fx__env, id: c2, arguments: {name: PATH}}",
        "{name: mcp__fx__slow, id: c3, arguments: {ms: 1}}",
        "{name: mcp__fx__fail, id: c4, arguments: {}}",
        "{name: mcp__fx__dotted_name, id: c5, arguments: {}}",
    ]
    .map(str::to_owned);
    let j = job(tmp.path(), "", &calls);
    let r = run_job(tmp.path(), &j, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    for id in ["c1", "c2", "c3", "c4", "c5"] {
        let d = denial(&result, id);
        assert_eq!(d["resolution"], "denied", "{d:#}");
        assert!(!output(&r, id).contains("waited"), "{}", output(&r, id));
    }
    assert!(
        !output(&r, "c1").contains('3'),
        "add ran: {}",
        output(&r, "c1")
    );
}

#[test]
fn tools_declared_read_only_run_with_no_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let calls = [
        "{name: mcp__fx__echo, id: r1, arguments: {text: read only}}",
        "{name: mcp__fx__lookup, id: r2, arguments: {name: word}}",
        "{name: mcp__fx__pid, id: r3, arguments: {}}",
        "{name: mcp__fx__big, id: r4, arguments: {bytes: 12}}",
        "{name: mcp__fx__echo, id: r5, arguments: {text: again}}",
    ]
    .map(str::to_owned);
    let j = job(tmp.path(), "", &calls);
    let r = run_job(tmp.path(), &j, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["permission_denials"], serde_json::json!([]));
    assert!(output(&r, "r1").contains("read only"));
    assert!(output(&r, "r2").contains("word: found"));
    assert!(output(&r, "r3").chars().any(|c| c.is_ascii_digit()));
    assert!(output(&r, "r4").contains("xxxxxxxxxxxx"));
    assert!(output(&r, "r5").contains("again"));
}

#[test]
fn a_rule_naming_the_tool_or_its_server_allows_it() {
    for (i, rule) in [
        "allow: [mcp__fx__write_file]",
        "allow: ['mcp__fx__*']",
        "allow: ['mcp__*']",
        "allow: ['*']",
        "allow: ['mcp__fx__write*']",
    ]
    .iter()
    .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join(format!("allowed{i}.txt"));
        let j = job(
            tmp.path(),
            &format!("permissions: {{{rule}}}"),
            &[write_call("w", &target)],
        );
        let r = run_job(tmp.path(), &j, &[]);
        assert_eq!(r.code, 0, "{r:#?}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap_or_default(),
            "planted",
            "{rule}: {r:#?}"
        );
    }
}

#[test]
fn readonly_and_plan_mode_change_nothing_through_mcp_even_with_a_rule() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "permissions: {allow: [mcp__fx__write_file]}",
            &["--readonly"],
        ),
        ("permissions: {allow: ['*']}", &["--readonly"]),
        (
            "permissions: {mode: plan, allow: [mcp__fx__write_file]}",
            &[],
        ),
        ("permissions: {mode: plan, allow: ['mcp__*']}", &[]),
        ("", &["--readonly", "--allow", "mcp__fx__write_file"]),
    ];
    for (permissions, flags) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("marker.txt");
        let calls = [
            write_call("w", &target),
            "{name: mcp__fx__echo, id: e, arguments: {text: still reads}}".to_owned(),
        ];
        let j = job(tmp.path(), permissions, &calls);
        let r = run_job(tmp.path(), &j, flags);
        assert_eq!(r.code, 0, "{permissions} {flags:?}: {r:#?}");
        assert!(!target.exists(), "{permissions} {flags:?}: written");
        let offered = r.events()[0]["tools"].to_string();
        assert!(!offered.contains("mcp__fx__write_file"), "{offered}");
        assert!(!offered.contains("mcp__fx__add"), "{offered}");
        assert!(offered.contains("mcp__fx__echo"), "{offered}");
        assert!(output(&r, "e").contains("still reads"));
    }
}

#[test]
fn untrusted_mode_needs_a_rule_naming_the_tool() {
    let broad = [
        "permissions: {allow: ['*']}",
        "permissions: {allow: ['mcp__*']}",
        "permissions: {allow: ['mcp__fx__*']}",
        "permissions: {mode: auto}",
        "",
    ];
    for permissions in broad {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("marker.txt");
        let j = job(tmp.path(), permissions, &[write_call("w", &target)]);
        let r = run_job(tmp.path(), &j, &["--untrusted"]);
        assert_eq!(r.code, 0, "{permissions}: {r:#?}");
        assert!(!target.exists(), "{permissions}: written in untrusted mode");
        let result = r.result();
        assert_eq!(denial(&result, "w")["allow_hint"], "mcp__fx__write_file");
    }
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("marker.txt");
    let j = job(
        tmp.path(),
        "permissions: {allow: [mcp__fx__write_file]}",
        &[write_call("w", &target)],
    );
    let r = run_job(tmp.path(), &j, &["--untrusted"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "planted");
}

#[test]
fn untrusted_mode_allows_only_closed_world_read_only_tools_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let calls = [
        "{name: mcp__fx__lookup, id: closed, arguments: {name: word}}",
        "{name: mcp__fx__echo, id: open, arguments: {text: open world}}",
    ]
    .map(str::to_owned);
    let j = job(tmp.path(), "", &calls);
    let r = run_job(tmp.path(), &j, &["--untrusted"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(output(&r, "closed").contains("word: found"));
    let result = r.result();
    assert_eq!(denial(&result, "open")["allow_hint"], "mcp__fx__echo");
}

/// `cn-run explain --json` for the fixture job, with `flags`.
fn explain(dir: &Path, permissions: &str, flags: &[&str]) -> Value {
    let j = job(dir, permissions, &[]);
    let mut cmd = cn_run(dir);
    cmd.arg("explain").arg("--json").arg(&j).args(flags);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:#?}"))
}

fn explained_tool<'a>(value: &'a Value, name: &str) -> &'a Value {
    value["mcp_servers"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not explained: {value:#}"))
}

#[test]
fn explain_lists_each_server_its_tools_annotations_and_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let value = explain(tmp.path(), "", &[]);
    let server = &value["mcp_servers"][0];
    assert_eq!(server["name"], "fx");
    assert_eq!(server["transport"], "stdio");
    assert_eq!(server["status"], "ready");
    let echo = explained_tool(&value, "mcp__fx__echo");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["verdict"], "allow");
    let write = explained_tool(&value, "mcp__fx__write_file");
    assert_eq!(write["annotations"]["destructiveHint"], true);
    assert_eq!(write["verdict"], "ask");
    assert_eq!(write["allow_hint"], "mcp__fx__write_file");
    assert_eq!(write["remote_name"], "write_file");
    assert_eq!(explained_tool(&value, "mcp__fx__add")["verdict"], "ask");
    assert_eq!(
        explained_tool(&value, "mcp__fx__dotted_name")["remote_name"],
        "dotted.name"
    );
    let offered = value["tools_offered"].to_string();
    assert!(offered.contains("mcp__fx__write_file"), "{offered}");
}

#[test]
fn explain_shows_what_readonly_exclude_and_allow_rules_do_to_mcp_tools() {
    let cases: [(&str, &[&str], &str, &str); 5] = [
        ("", &["--readonly"], "exclude", "allow"),
        (
            "permissions: {allow: [mcp__fx__write_file]}",
            &[],
            "allow",
            "allow",
        ),
        (
            "permissions: {exclude: ['mcp__fx__*']}",
            &[],
            "exclude",
            "exclude",
        ),
        (
            "permissions: {mode: plan, allow: ['*']}",
            &[],
            "exclude",
            "allow",
        ),
        ("", &["--auto"], "allow", "allow"),
    ];
    for (permissions, flags, write, echo) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let value = explain(tmp.path(), permissions, flags);
        let w = explained_tool(&value, "mcp__fx__write_file");
        assert_eq!(w["verdict"], write, "{permissions} {flags:?}: {w:#}");
        assert_eq!(w["offered"], write != "exclude", "{permissions} {flags:?}");
        let e = explained_tool(&value, "mcp__fx__echo");
        assert_eq!(e["verdict"], echo, "{permissions} {flags:?}: {e:#}");
    }
}

#[test]
fn explain_lists_a_server_that_fails_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = "  gone:\n    command: /nonexistent/mcp-server\n";
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\nmcp_servers:\n{servers}"
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", "- text: x\n")]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("explain").arg("job.yaml");
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(r.stdout.contains("gone (stdio, failed)"), "{}", r.stdout);
    assert!(r.stdout.contains("/nonexistent/mcp-server"), "{}", r.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_requests_carry_at_most_128_tools_and_the_run_says_which_were_left_out() {
    use crate::support::http::{MockServer, Reply};
    use crate::support::sse::openai;
    for servers in [12usize, 13] {
        let server = MockServer::start(vec![Reply::sse(200, openai::answer("done"))]).await;
        let tmp = tempfile::tempdir().unwrap();
        let list: String = (0..servers)
            .map(|i| format!("  s{i:02}:\n    command: {}\n", fixture().display()))
            .collect();
        let job = format!(
            "version: 1\nmodel:\n  provider: openai\n  name: gpt-4o\n  api_base: {}/v1\n  api_key_env: TEST_OPENAI_KEY\nprompt: p\nmcp_servers:\n{list}",
            server.url()
        );
        write_files(tmp.path(), &[("job.yaml", &job)]);
        let dir = tmp.path().to_path_buf();
        let r = tokio::task::spawn_blocking(move || {
            let mut cmd = cn_run(&dir);
            cmd.arg("job.yaml")
                .env("TEST_OPENAI_KEY", "sk-test-KEY-0123456789");
            run(cmd, Some(&dir.join("out")))
        })
        .await
        .unwrap();
        assert_eq!(r.code, 0, "{r:#?}");
        let sent = server.requests()[0].json()["tools"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(sent, 128, "{servers} servers");
        let names = server.requests()[0].json()["tools"].to_string();
        assert!(names.contains("\"Read\"") && names.contains("mcp__s00__echo"));
        let last = format!("mcp__s{:02}__write_file", servers - 1);
        assert!(!names.contains(&last), "{last} was sent");
        let warnings = r.result()["warnings"].to_string();
        assert!(
            warnings.contains("at most 128 tools") && warnings.contains(&last),
            "{warnings}"
        );
    }
}
