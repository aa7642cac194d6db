//! Limits bind: a response with 10,000 tool calls ends at the run's time limit (not after
//! running them all), only the capped number run; a provider that sends nothing but
//! keep-alive comments is cut off at the request ceiling; a redirect to another host is
//! not followed (the other host is never reached). Margins are generous: the tests show
//! that the run ended and why, not how fast.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::http::{Chunk, MockServer, Reply};
use crate::support::runner::{cn_run, run, write_files};
use crate::support::sse::openai;

fn many_calls(n: usize, command: &str) -> String {
    let calls: Vec<_> = (0..n)
        .map(|_| json!({"name": "Bash", "arguments": {"command": command}}))
        .collect();
    json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}).to_string()
}

#[test]
fn ten_thousand_calls_end_at_the_time_limit_with_only_the_cap_run() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nname: many\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\nlimits: {timeout: 5s}\npermissions: {allow: ['Bash(sleep *)']}\n",
            ),
            ("s.json", &many_calls(10_000, "sleep 120")),
        ],
    );
    let started = Instant::now();
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    let took = started.elapsed();
    assert_eq!(r.code, 4, "{r:#?}");
    let result = r.result();
    assert_eq!(result["limit"], "timeout", "{result}");
    // Each call sleeps 120 s: ending well before that shows the limit bound the run.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let started_calls = r.events_of("tool.started").len();
    assert!(
        (1..=64).contains(&started_calls),
        "{started_calls} calls started"
    );
    // Every call got a result (the API needs one per call), the rest say why they did not run.
    let session = crate::support::runner::session_of(&tmp.path().join("out"));
    let results: Vec<&serde_json::Value> = session["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 10_000);
    assert!(
        results
            .iter()
            .any(|m| m.to_string().contains("max_calls_per_response")
                || m.to_string().contains("the run stopped")),
        "no call says why it did not run"
    );
}

#[test]
fn the_cap_on_calls_per_response_is_configurable_and_the_rest_are_told_why() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nname: capped\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\nlimits: {max_calls_per_response: 3}\npermissions: {allow: ['Bash(echo *)']}\n",
            ),
            ("s.json", &many_calls(10, "echo ran")),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.events_of("tool.started").len(), 3);
    let finished = r.events_of("tool.finished");
    assert_eq!(finished.len(), 10);
    let refused = finished
        .iter()
        .filter(|e| {
            e["output"]
                .as_str()
                .unwrap_or_default()
                .contains("at most 3 run per response")
        })
        .count();
    assert_eq!(refused, 7);
}

fn openai_job(dir: &std::path::Path, api_base: &str, extra_model: &str) {
    let job = format!(
        "version: 1\nname: net\nmodel:\n  provider: openai\n  name: test-model\n  api_base: {api_base}\n  api_key_env: TEST_KEY\n  retry: {{max_retries: 0}}\n{extra_model}prompt: hi\n"
    );
    write_files(dir, &[("job.yaml", &job)]);
}

async fn run_job(dir: &std::path::Path) -> (crate::support::runner::Run, Duration) {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml").env("TEST_KEY", "sk-test-0123456789");
        let started = Instant::now();
        let r = run(cmd, Some(&dir.join("out")));
        (r, started.elapsed())
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_keep_alive_only_stream_ends_at_the_request_ceiling() {
    // Comments every 200 ms for two minutes: the idle timer never fires.
    let server = MockServer::start_with(|_| {
        let mut chunks = vec![Chunk::from(openai::role())];
        chunks.extend((0..600).map(|_| Chunk::after(200, ": keep-alive\n\n")));
        Reply::sse(200, chunks)
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    openai_job(
        tmp.path(),
        &format!("{}/v1", server.url()),
        "  idle_timeout: 1s\n  request_timeout: 2s\n",
    );
    let (r, took) = run_job(tmp.path()).await;
    assert_eq!(r.code, 5, "{r:#?}");
    let reason = r.result()["reason"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains("timed out"), "{reason}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_host_is_not_followed() {
    let elsewhere =
        MockServer::start_with(|_| Reply::sse(200, openai::answer("stolen conversation"))).await;
    // Another port and another host name: neither is the api_base's origin.
    let port = elsewhere.url().rsplit(':').next().unwrap().to_owned();
    for target in [
        format!("{}/v1/chat/completions", elsewhere.url()),
        format!("http://localhost:{port}/v1/chat/completions"),
    ] {
        let location = target.clone();
        let server = MockServer::start_with(move |_| {
            Reply::text(307, "text/plain", "moved").with_header("location", &location)
        })
        .await;
        let tmp = tempfile::tempdir().unwrap();
        openai_job(tmp.path(), &format!("{}/v1", server.url()), "");
        let (r, _) = run_job(tmp.path()).await;
        assert_eq!(r.code, 5, "{target}: {r:#?}");
        assert!(!r.stdout.contains("stolen"), "{target}");
        assert!(
            elsewhere.requests().is_empty(),
            "{target}: the other host was reached"
        );
        assert_eq!(server.requests().len(), 1, "{target}");
    }
}
