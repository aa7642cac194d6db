//! Edit and MultiEdit as the agent calls them: read-before-edit, the workspace and symlink
//! boundary, atomic writes that keep the file's mode, all-or-nothing batches, the strategy
//! and diff in the result, non-ASCII text, and the capability rule choosing the tool.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use cn_run::tools::{
    Edit, MultiEdit, Read, Tool, ToolContext, ToolError, ToolLimits, ToolShared, Write,
    edit_tool_for,
};
use serde_json::{Value, json};
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

async fn read(ctx: &ToolContext, path: &str) {
    Read.run(json!({"filepath": path}), ctx)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

fn model_error(result: Result<cn_run::tools::ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::RespondToModel(msg)) => msg,
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

fn edit(file: &str, old: &str, new: &str) -> Value {
    json!({"file_path": file, "old_string": old, "new_string": new})
}

#[tokio::test]
async fn edit_is_refused_until_the_file_was_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let ctx = ctx(dir.path());
    let msg = model_error(Edit.run(edit("a.txt", "two", "2"), &ctx).await);
    assert!(msg.contains("Read a.txt"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );

    read(&ctx, "./a.txt").await;
    let out = Edit.run(edit("a.txt", "two", "2"), &ctx).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    assert!(out.content.contains("exactMatch"), "{}", out.content);
    assert!(
        out.content.contains("--- a.txt\n+++ a.txt\n"),
        "{}",
        out.content
    );
    assert!(out.content.contains("\n-two\n+2\n"), "{}", out.content);
}

#[tokio::test]
async fn a_file_created_with_write_counts_as_read_but_edit_cannot_create() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    Write
        .run(
            json!({"filepath": "new/b.rs", "content": "fn main() {}\n"}),
            &ctx,
        )
        .await
        .unwrap();
    Edit.run(edit("new/b.rs", "main", "start"), &ctx)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/b.rs")).unwrap(),
        "fn start() {}\n"
    );

    let msg = model_error(Edit.run(edit("missing.rs", "", "x"), &ctx).await);
    assert!(msg.contains("Write"), "{msg}");
    assert!(!dir.path().join("missing.rs").exists());
}

#[tokio::test]
async fn edits_outside_the_workspace_or_through_a_symlink_need_permission() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f.txt"), "keep me\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("f.txt"), ws.join("alias.txt")).unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=x\n").unwrap();
    let ctx = ctx(&ws);
    let shared = &ctx.shared;

    for (tool, file) in [
        (&Edit as &dyn Tool, "../outside/f.txt"),
        (&Edit, "link/f.txt"),
        (&MultiEdit, "alias.txt"),
        (&Edit, outside.join("f.txt").to_str().unwrap()),
    ] {
        let args =
            json!({"file_path": file, "old_string": "keep", "new_string": "lose", "edits": []});
        let t = tool
            .tighten(&args, shared)
            .unwrap_or_else(|| panic!("{file} not tightened"));
        assert_eq!(t.rule, "tool.write_outside_workspace", "{file}");
        assert_eq!(t.permission, cn_run::permissions::Permission::Ask);
    }
    let env = Edit.tighten(&edit(".env", "x", "y"), shared).unwrap();
    assert_eq!(env.rule, "tool.sensitive_file");
    assert_eq!(Edit.tighten(&edit("src/ok.rs", "x", "y"), shared), None);
    assert_eq!(
        std::fs::read_to_string(outside.join("f.txt")).unwrap(),
        "keep me\n"
    );
}

#[tokio::test]
async fn the_write_is_atomic_and_keeps_an_executable_mode() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o754)).unwrap();
    let inode_before = std::fs::metadata(&script).unwrap().ino();
    let ctx = ctx(dir.path());
    read(&ctx, "run.sh").await;
    Edit.run(edit("run.sh", "echo old", "echo new"), &ctx)
        .await
        .unwrap();
    let meta = std::fs::metadata(&script).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o754);
    // Replaced by rename, not rewritten in place: a reader never sees half a file.
    assert_ne!(meta.ino(), inode_before);
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho new\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "temp files left behind: {leftovers:?}");
}

#[tokio::test]
async fn multi_edit_writes_nothing_when_a_later_edit_fails() {
    let dir = tempfile::tempdir().unwrap();
    let original = "alpha\nbeta\ngamma\n";
    std::fs::write(dir.path().join("m.txt"), original).unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "m.txt").await;
    let args = json!({"file_path": "m.txt", "edits": [
        {"old_string": "alpha", "new_string": "A"},
        {"old_string": "beta", "new_string": "B"},
        {"old_string": "delta", "new_string": "D"},
    ]});
    let msg = model_error(MultiEdit.run(args, &ctx).await);
    assert!(msg.contains("edits[2]"), "{msg}");
    assert!(msg.contains("unchanged"), "{msg}");
    assert_eq!(
        std::fs::read(dir.path().join("m.txt")).unwrap(),
        original.as_bytes()
    );
}

#[tokio::test]
async fn multi_edit_applies_edits_in_order_and_names_each_strategy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "def Foo():\n    return 1\n").unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "m.py").await;
    let args = json!({"file_path": "m.py", "edits": [
        {"old_string": "return 1", "new_string": "return 2"},
        // Sees the first edit's result; matches only when case is ignored.
        {"old_string": "def foo():\n    RETURN 2", "new_string": "def bar():\n    return 3"},
    ]});
    let out = MultiEdit.run(args, &ctx).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        "def bar():\n    return 3\n"
    );
    assert!(out.content.contains("2 edits"), "{}", out.content);
    assert!(
        out.content.contains("exactMatch, caseInsensitiveMatch"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("not found verbatim"),
        "{}",
        out.content
    );
    assert!(out.content.contains("+def bar():"), "{}", out.content);
}

#[tokio::test]
async fn an_ambiguous_old_string_needs_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.txt"), "x = 1\ny = 1\n").unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "r.txt").await;
    let msg = model_error(Edit.run(edit("r.txt", "1", "2"), &ctx).await);
    assert!(msg.contains("2 places"), "{msg}");
    assert!(!msg.starts_with("edits["), "{msg}");
    let args =
        json!({"file_path": "r.txt", "old_string": "1", "new_string": "2", "replace_all": true});
    let out = Edit.run(args, &ctx).await.unwrap();
    assert!(out.content.contains("2 replacements"), "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.txt")).unwrap(),
        "x = 2\ny = 2\n"
    );
}

#[tokio::test]
async fn non_ascii_text_is_edited_exactly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("u.md"), "Ünïcödé café — 日本語 🌍\nnext\n").unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "u.md").await;
    Edit.run(edit("u.md", "café — 日本語", "コーヒー ☕"), &ctx)
        .await
        .unwrap();
    // Case-insensitive match across non-ASCII letters.
    Edit.run(edit("u.md", "ÜNÏCÖDÉ", "unicode"), &ctx)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("u.md")).unwrap(),
        "unicode コーヒー ☕ 🌍\nnext\n"
    );
}

#[tokio::test]
async fn a_crlf_file_keeps_its_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.txt"), "a\r\nb\r\nc\r\n").unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "w.txt").await;
    let out = Edit
        .run(edit("w.txt", "a\nb", "x\ny\nz"), &ctx)
        .await
        .unwrap();
    assert!(out.content.contains("exactMatch"), "{}", out.content);
    let args = json!({"file_path": "w.txt", "edits": [{"old_string": "z\nc", "new_string": "c"}]});
    MultiEdit.run(args, &ctx).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("w.txt")).unwrap(),
        b"x\r\ny\r\nc\r\n"
    );
}

#[tokio::test]
async fn invalid_arguments_come_back_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let ctx = ctx(dir.path());
    read(&ctx, "a.txt").await;
    let msg = model_error(Edit.run(edit("a.txt", "a", "a"), &ctx).await);
    assert!(msg.contains("identical"), "{msg}");
    let msg = model_error(
        MultiEdit
            .run(json!({"file_path": "a.txt", "edits": []}), &ctx)
            .await,
    );
    assert!(msg.contains("at least one"), "{msg}");
}

#[test]
fn the_capability_rule_chooses_between_edit_and_multi_edit() {
    assert_eq!(
        edit_tool_for("anthropic/claude-sonnet-4").name(),
        "MultiEdit"
    );
    assert_eq!(edit_tool_for("o4-mini").name(), "MultiEdit");
    assert_eq!(edit_tool_for("deepseek-coder").name(), "Edit");
    let spec = edit_tool_for("gpt-5").spec();
    assert_eq!(spec.parameters["required"], json!(["file_path", "edits"]));
    let spec = edit_tool_for("phi-4").spec();
    assert_eq!(
        spec.parameters["required"],
        json!(["file_path", "old_string", "new_string"])
    );
}
