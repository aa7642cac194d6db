//! UploadArtifact and ReportFailure: what a CI user finds after the run (the copied file,
//! its record with size and hash) and how the agent ends a run it cannot finish.

use std::path::Path;
use std::sync::Arc;

use cn_run::tools::{
    Control, ReportFailure, Tool, ToolContext, ToolError, ToolLimits, ToolShared, UploadArtifact,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

fn ctx(ws: &Path, artifacts: &Path) -> ToolContext {
    let shared = ToolShared::new(
        ws.canonicalize().unwrap_or_else(|e| panic!("{e}")),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        artifacts.to_path_buf(),
    );
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "call-1".into(),
        grant: cn_run::tools::Grant::default(),
    }
}

fn model_error(result: Result<cn_run::tools::ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::RespondToModel(msg)) => msg,
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

#[tokio::test]
async fn an_uploaded_file_is_copied_hashed_and_listed() {
    let (ws, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(ws.path().join("reports")).unwrap();
    std::fs::write(
        ws.path().join("reports/junit.xml"),
        "<testsuite tests=\"1\"/>",
    )
    .unwrap();
    let ctx = ctx(ws.path(), out.path());
    let res = UploadArtifact
        .run(json!({"filePath": "reports/junit.xml"}), &ctx)
        .await
        .unwrap();
    assert!(res.content.contains("reports/junit.xml"), "{}", res.content);

    let records = ctx.shared.artifacts();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.path, "reports/junit.xml");
    assert_eq!(r.kind, "application/xml");
    assert_eq!(r.size, "<testsuite tests=\"1\"/>".len() as u64);
    assert_eq!(r.stored, out.path().join("reports/junit.xml"));
    assert_eq!(
        std::fs::read_to_string(&r.stored).unwrap(),
        "<testsuite tests=\"1\"/>"
    );
    let expected: String = Sha256::digest(b"<testsuite tests=\"1\"/>")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(r.sha256, expected);

    // Uploading the same path again replaces the record and the copy.
    std::fs::write(
        ws.path().join("reports/junit.xml"),
        "<testsuite tests=\"2\"/>",
    )
    .unwrap();
    UploadArtifact
        .run(json!({"filePath": "./reports/junit.xml"}), &ctx)
        .await
        .unwrap();
    let records = ctx.shared.artifacts();
    assert_eq!(records.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&records[0].stored).unwrap(),
        "<testsuite tests=\"2\"/>"
    );
}

#[tokio::test]
async fn disallowed_types_big_files_and_outside_paths_are_refused() {
    let (ws, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(ws.path().join("tool.exe"), "MZ").unwrap();
    let big = std::fs::File::create(ws.path().join("huge.log")).unwrap();
    big.set_len(51 * 1024 * 1024).unwrap();
    let ctx = ctx(ws.path(), out.path());

    let msg = model_error(
        UploadArtifact
            .run(json!({"filePath": "tool.exe"}), &ctx)
            .await,
    );
    assert!(
        msg.contains("not an accepted artifact type") && msg.contains(".tar.gz"),
        "{msg}"
    );
    let msg = model_error(
        UploadArtifact
            .run(json!({"filePath": "huge.log"}), &ctx)
            .await,
    );
    assert!(msg.contains("50 MB"), "{msg}");
    let msg = model_error(
        UploadArtifact
            .run(json!({"filePath": "nope.txt"}), &ctx)
            .await,
    );
    assert!(msg.contains("does not exist"), "{msg}");
    assert!(ctx.shared.artifacts().is_empty());
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);

    let t = UploadArtifact
        .tighten(&json!({"filePath": "/etc/hostname"}), &ctx.shared)
        .unwrap();
    assert_eq!(t.rule, "tool.outside_workspace");
}

#[tokio::test]
async fn report_failure_ends_the_run_with_the_reason() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path(), ws.path());
    let reason = "The tests need a database that is not available in CI.";
    let out = ReportFailure
        .run(json!({"errorMessage": reason}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.control, Some(Control::ReportFailure(reason.to_owned())));
    let msg = model_error(ReportFailure.run(json!({"errorMessage": "  "}), &ctx).await);
    assert!(msg.contains("errorMessage"), "{msg}");
    assert_eq!(
        ReportFailure.spec().parameters["required"],
        json!(["errorMessage"])
    );
}
