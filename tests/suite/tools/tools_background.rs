//! Background jobs from the agent's side: Bash `run_in_background`, CheckBackgroundJob's
//! JSON for running and finished jobs, the five-job limit, bounded output, and `kill_all`
//! leaving no process of any job alive.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cn_run::tools::{
    Bash, CheckBackgroundJob, Tool, ToolContext, ToolError, ToolLimits, ToolShared,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn ctx(ws: &Path) -> ToolContext {
    let ws = ws.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let env = vec![("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())];
    let shared = ToolShared::new(
        ws.clone(),
        env,
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

async fn start(ctx: &ToolContext, command: &str) -> String {
    let out = Bash
        .run(json!({"command": command, "run_in_background": true}), ctx)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .content;
    let id = out
        .split_whitespace()
        .find(|w| w.starts_with("bg-"))
        .unwrap_or_else(|| panic!("no job id in {out}"));
    id.trim_end_matches([',', '.']).to_owned()
}

async fn check(ctx: &ToolContext, id: &str) -> Value {
    let out = CheckBackgroundJob
        .run(json!({"job_id": id}), ctx)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .content;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

async fn wait_finished(ctx: &ToolContext, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let job = check(ctx, id).await;
        if job["status"] != "running" || Instant::now() > deadline {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `pid` is a live process (a zombie waiting to be reaped counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            state != Some("Z") && state != Some("X")
        }
    }
}

async fn read_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn kill_all_leaves_no_process_of_any_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let id = start(
        &ctx,
        "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait",
    )
    .await;
    let shell = read_pid(&dir.path().join("shell.pid")).await;
    let child = read_pid(&dir.path().join("child.pid")).await;
    assert!(alive(shell) && alive(child));
    let job = check(&ctx, &id).await;
    assert_eq!(job["status"], "running", "{job}");
    assert!(
        job.get("ended_at").is_none() && job.get("exit_code").is_none(),
        "{job}"
    );

    let started = Instant::now();
    ctx.shared.background().kill_all().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!alive(shell), "the job's shell survived");
    assert!(!alive(child), "the job's child process survived");
    let job = check(&ctx, &id).await;
    assert_eq!(job["status"], "killed", "{job}");
    assert!(job["ended_at"].is_string(), "{job}");
}

#[tokio::test]
async fn a_finished_jobs_output_and_exit_code_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let failed = start(&ctx, "echo to-stdout; echo to-stderr >&2; exit 3").await;
    let ok = start(&ctx, "printf 'a\\nb'").await;
    let job = wait_finished(&ctx, &failed).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert_eq!(job["exit_code"], 3);
    assert_eq!(job["job_id"], failed.as_str());
    assert_eq!(job["command"], "echo to-stdout; echo to-stderr >&2; exit 3");
    let output = job["output"].as_str().unwrap();
    assert!(
        output.contains("to-stdout") && output.contains("to-stderr"),
        "{job}"
    );
    assert!(
        job["started_at"].is_string() && job["ended_at"].is_string(),
        "{job}"
    );

    let job = wait_finished(&ctx, &ok).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["exit_code"], 0);
    assert_eq!(job["output"], "a\nb\n");
}

#[tokio::test]
async fn output_keeps_the_last_thousand_lines() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let id = start(&ctx, "seq 1 5000").await;
    let job = wait_finished(&ctx, &id).await;
    let output = job["output"].as_str().unwrap();
    assert!(
        output.starts_with("[4000 earlier lines not shown]\n4001\n"),
        "{}",
        &output[..60]
    );
    assert!(output.ends_with("\n5000\n"));
    assert_eq!(output.lines().count(), 1_001);
}

#[tokio::test]
async fn a_sixth_concurrent_job_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    for _ in 0..5 {
        start(&ctx, "sleep 300").await;
    }
    let sixth = Bash
        .run(
            json!({"command": "sleep 300", "run_in_background": true}),
            &ctx,
        )
        .await;
    match sixth {
        Err(ToolError::RespondToModel(msg)) => {
            assert!(msg.contains("5 are already running"), "{msg}");
            assert!(msg.contains("bg-1") && msg.contains("bg-5"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    ctx.shared.background().kill_all().await;
    // With the others gone, a new job may start.
    let id = start(&ctx, "true").await;
    assert_eq!(id, "bg-6");
    ctx.shared.background().kill_all().await;
}

#[tokio::test]
async fn an_unknown_job_id_lists_the_jobs_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let id = start(&ctx, "echo hi").await;
    wait_finished(&ctx, &id).await;
    match CheckBackgroundJob
        .run(json!({"job_id": "bg-99"}), &ctx)
        .await
    {
        Err(ToolError::RespondToModel(msg)) => {
            let body: Value = serde_json::from_str(&msg).unwrap();
            assert_eq!(body["error"], "Job bg-99 not found");
            assert_eq!(
                body["available_jobs"],
                json!([{"id": "bg-1", "status": "completed", "command": "echo hi"}])
            );
        }
        other => panic!("{other:?}"),
    }
}
