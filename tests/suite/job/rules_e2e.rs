//! Rules: always-apply rules are in every system message; a glob rule joins the system
//! message only after the run touches a matching file, from the next request on, once.

use serde_json::json;

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{cn_run, run, write_files};
use crate::support::sse::openai;

fn read_call(id: &str, path: &str) -> Reply {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(
        0,
        id,
        "Read",
        &[&json!({"filepath": path}).to_string()],
    ));
    chunks.extend([openai::finish("tool_calls"), openai::done()]);
    Reply::sse(200, chunks)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_glob_rule_applies_after_a_matching_file_is_touched() {
    let server = MockServer::start(vec![
        read_call("c1", "README.md"),
        read_call("c2", "src/lib.rs"),
        read_call("c3", "src/other.rs"),
        Reply::sse(200, openai::answer("done")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().to_path_buf();
    let job = format!(
        "version: 1\nmodel: {{provider: openai, name: gpt-4o, api_base: {}/v1}}\nprompt: look\nrules:\n  - Always be brief.\n",
        server.url()
    );
    write_files(
        &ws,
        &[
            ("job.yaml", &job),
            ("README.md", "hello\n"),
            ("src/lib.rs", "pub fn f() {}\n"),
            ("src/other.rs", "pub fn g() {}\n"),
            (
                ".continue/rules/rust.md",
                "---\nglobs: \"*.rs\"\ndescription: Rust style\n---\nRUST-RULE: prefer iterators.\n",
            ),
            (
                ".continue/rules/never.md",
                "---\nalwaysApply: false\n---\nNEVER-RULE\n",
            ),
        ],
    );
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&ws);
        cmd.arg("job.yaml");
        run(cmd, Some(&ws.join("out")))
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    let systems: Vec<String> = server
        .requests()
        .iter()
        .map(|q| {
            q.json()["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(systems.len(), 4);
    assert!(systems.iter().all(|s| s.contains("Always be brief.")));
    assert!(!systems[0].contains("RUST-RULE") && !systems[1].contains("RUST-RULE"));
    assert!(systems[2].contains("RUST-RULE") && systems[3].contains("RUST-RULE"));
    assert_eq!(systems[3].matches("RUST-RULE").count(), 1, "added once");
    assert!(systems.iter().all(|s| !s.contains("NEVER-RULE")));
    let applied = r.result()["rules_applied"].clone();
    let rust = applied
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["origin"] == ".continue/rules/rust.md")
        .unwrap();
    assert_eq!(rust["turn"], 2);
    assert!(rust["reason"].as_str().unwrap().contains("src/lib.rs"));
}
