//! The Search tool on real directory trees: .gitignore honoured without git, `path` and
//! `file_pattern` scoping, the 100-result cap and its note, invalid regexes and credential
//! files.

use std::path::Path;
use std::sync::Arc;

use cn_run::tools::{Search, Tool, ToolContext, ToolError, ToolLimits, ToolShared};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn ctx(ws: &Path) -> ToolContext {
    let ws = ws.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let shared = ToolShared::new(
        ws.clone(),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        ws.join(".artifacts"),
    );
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "call-1".into(),
        grant: cn_run::tools::Grant::default(),
    }
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, content).unwrap_or_else(|e| panic!("{e}"));
    }
    dir
}

async fn search(dir: &Path, args: serde_json::Value) -> String {
    Search
        .run(args, &ctx(dir))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .content
}

#[tokio::test]
async fn gitignored_files_are_not_searched_even_without_a_repository() {
    let dir = tree(&[
        (".gitignore", "build/\n*.log\n"),
        ("src/main.rs", "fn main() {\n    needle();\n}\n"),
        ("build/out.rs", "needle\n"),
        ("debug.log", "needle\n"),
        ("README.md", "no match here\n"),
    ]);
    let out = search(dir.path(), json!({"pattern": "needle"})).await;
    assert!(out.contains("src/main.rs:2:    needle();"), "{out}");
    assert!(!out.contains("build/"), "{out}");
    assert!(!out.contains("debug.log"), "{out}");
    assert!(
        out.starts_with("Search results for pattern \"needle\""),
        "{out}"
    );
}

#[tokio::test]
async fn file_pattern_and_path_narrow_the_search() {
    let dir = tree(&[
        ("app/a.py", "token = 1\n"),
        ("app/b.ts", "const token = 2;\n"),
        ("lib/c.py", "token = 3\n"),
    ]);
    let out = search(
        dir.path(),
        json!({"pattern": "token", "file_pattern": "*.py"}),
    )
    .await;
    assert!(
        out.contains("app/a.py:1:") && out.contains("lib/c.py:1:"),
        "{out}"
    );
    assert!(!out.contains("b.ts"), "{out}");
    assert!(out.contains("in files matching \"*.py\""), "{out}");

    let out = search(dir.path(), json!({"pattern": "token", "path": "app"})).await;
    assert!(
        out.contains("app/a.py:1:") && out.contains("app/b.ts:1:"),
        "{out}"
    );
    assert!(!out.contains("lib/c.py"), "{out}");

    let out = search(
        dir.path(),
        json!({"pattern": "t.ken\\s*=\\s*[23]", "path": "app"}),
    )
    .await;
    assert!(
        out.contains("app/b.ts:1:const token = 2;") && !out.contains("a.py"),
        "{out}"
    );
}

#[tokio::test]
async fn results_are_capped_at_100_with_a_note() {
    let body: String = (1..=150).map(|i| format!("match {i}\n")).collect();
    let dir = tree(&[("many.txt", &body)]);
    let out = search(dir.path(), json!({"pattern": "^match"})).await;
    let lines = out.lines().filter(|l| l.starts_with("many.txt:")).count();
    assert_eq!(lines, 100, "{out}");
    assert!(out.contains("many.txt:100:match 100"), "{out}");
    assert!(!out.contains("many.txt:101:"), "{out}");
    assert!(out.contains("showing 100 of 150 matches"), "{out}");
}

#[tokio::test]
async fn no_match_invalid_regex_and_missing_path() {
    let dir = tree(&[("a.txt", "hello\n")]);
    let out = search(dir.path(), json!({"pattern": "absent"})).await;
    assert_eq!(out, "No matches found for pattern \"absent\".");

    let ctx = ctx(dir.path());
    match Search.run(json!({"pattern": "foo(bar"}), &ctx).await {
        Err(ToolError::RespondToModel(msg)) => {
            assert!(msg.contains("Invalid regular expression"), "{msg}");
            assert!(msg.contains("backslash"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    match Search
        .run(json!({"pattern": "x", "path": "nope"}), &ctx)
        .await
    {
        Err(ToolError::RespondToModel(msg)) => assert!(msg.contains("does not exist"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn credential_files_are_skipped_and_long_lines_cut() {
    let long = format!("secret {}\n", "x".repeat(3_000));
    let dir = tree(&[
        (".env.local", "secret=hunter2\n"),
        ("keys/id.pem", "secret\n"),
        ("big.txt", &long),
    ]);
    let out = search(dir.path(), json!({"pattern": "secret"})).await;
    assert!(!out.contains("hunter2"), "{out}");
    assert!(out.contains("credential-like files"), "{out}");
    let line = out.lines().find(|l| l.starts_with("big.txt:1:")).unwrap();
    assert!(
        line.len() < 700 && line.contains("more characters"),
        "{line}"
    );

    let ctx = ctx(dir.path());
    let t = Search.tighten(&json!({"pattern": "x", "path": ".env.local"}), &ctx.shared);
    assert_eq!(t.map(|t| t.rule), Some("tool.sensitive_file"));
}
