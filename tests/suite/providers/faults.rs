//! Provider fault injection: the binary against a local server that misbehaves — a
//! truncated stream, a stall longer than the idle timeout, malformed tool-call arguments, an
//! unknown tool, a huge argument, a 200 carrying an error, a connection reset mid-stream,
//! HTML error pages. Every run must end in recovery (a retry, or an error tool result the
//! model can act on) or in a clean exit 5 — with result.json and session.jsonl written, and
//! within a time bound: never a panic, never a hang.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, write_files};
use crate::support::sse::{anthropic, openai};

/// No fault below takes more than a few seconds to resolve; past this the run hung.
const BOUND: Duration = Duration::from_secs(45);

fn job(dir: &Path, provider: &str, url: &str, extra: &str) -> PathBuf {
    let api_base = if provider == "openai" {
        format!("{url}/v1")
    } else {
        url.to_owned()
    };
    let job = format!(
        "version: 1\nname: faults\nmodel:\n  provider: {provider}\n  name: test-model\n  api_base: {api_base}\n  api_key_env: TEST_KEY\n  retry: {{max_retries: 2, initial_delay: 10ms}}\n  idle_timeout: 1s\nprompt: look around\nlimits: {{max_turns: 6}}\n{extra}"
    );
    write_files(dir, &[("job.yaml", &job), ("notes.txt", "hello notes\n")]);
    dir.join("job.yaml")
}

/// Kills the child if the test panics, so a hung run never outlives the test.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the binary on `job` and waits at most [`BOUND`]; a longer run is a hang.
async fn run_bounded(dir: &Path, job: &Path) -> (Run, Duration) {
    let (dir, job) = (dir.to_path_buf(), job.to_path_buf());
    tokio::task::spawn_blocking(move || {
        let out = dir.join("out");
        let (stdout, stderr) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
        let mut cmd = cn_run(&dir);
        cmd.arg(&job)
            .arg("-C")
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .env("TEST_KEY", "sk-test-0123456789")
            .stdout(Stdio::from(std::fs::File::create(&stdout).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
        let started = Instant::now();
        let mut child = KillOnDrop(cmd.spawn().expect("spawn cn-run"));
        let status = loop {
            if let Some(status) = child.0.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > BOUND {
                let log = std::fs::read_to_string(&stderr).unwrap_or_default();
                panic!("cn-run hung: still running after {BOUND:?}\n{log}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: std::fs::read_to_string(&stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&stderr).unwrap_or_default(),
            out: Some(out),
        };
        (run, started.elapsed())
    })
    .await
    .unwrap()
}

/// What every run must leave behind, whatever went wrong: a result with a status and a
/// reason, and the session. Returns the result.
fn left_behind(r: &Run, code: i32) -> Value {
    assert_eq!(r.code, code, "{r:#?}");
    assert!(
        !r.stderr.contains("panicked"),
        "cn-run panicked:\n{}",
        r.stderr
    );
    let result = r.result();
    assert_eq!(result["exit_code"], code, "{result}");
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(!reason.trim().is_empty(), "no reason: {result}");
    let out = r.out.as_ref().unwrap();
    let session: Value = crate::support::runner::session_of(out);
    assert!(session.is_object(), "{session}");
    result
}

fn retries(r: &Run) -> Vec<String> {
    r.events_of("model.retry")
        .iter()
        .map(|e| e["error_kind"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The last message of a recorded OpenAI request: the tool result the model sees.
fn last_tool_result(request: &RecordedRequest) -> Value {
    let body = request.json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool", "{last}");
    last
}

fn openai_tool_reply(id: &str, name: &str, pieces: &[&str]) -> Reply {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(0, id, name, pieces));
    chunks.extend([
        openai::finish("tool_calls"),
        openai::usage(50, 10, 0),
        openai::done(),
    ]);
    Reply::sse(200, chunks)
}

/// The first bytes of a stream that never finishes: role and a little text.
fn partial_openai() -> Vec<String> {
    vec![openai::role(), openai::text("I will look")]
}

fn bytes_of(chunks: &[String]) -> usize {
    chunks.iter().map(String::len).sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_truncated_stream_is_retried_and_the_run_recovers() {
    let partial = partial_openai();
    // Once cut cleanly between events, once in the middle of an event's JSON.
    let server = MockServer::start(vec![
        Reply::sse(200, partial.clone()).close_after(bytes_of(&partial)),
        Reply::sse(200, openai::answer("x")).close_after(bytes_of(&partial) + 7),
        Reply::sse(200, openai::answer("recovered")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 0);
    assert_eq!(r.stdout, "recovered\n");
    assert_eq!(result["result"], "recovered");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries(&r), ["network", "network"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_that_always_ends_early_exits_5_with_the_reason() {
    // A body that ends cleanly (HTTP-wise) before the answer is complete: no finish reason,
    // no `[DONE]`.
    let server = MockServer::start_with(|_| Reply::sse(200, partial_openai())).await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert_eq!(result["status"], "provider_error");
    assert!(
        result["reason"].as_str().unwrap().contains("ended early"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 3, "the first try and 2 retries");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_stream_times_out_and_is_retried() {
    let partial = partial_openai();
    let server = MockServer::start(vec![
        Reply::sse(200, partial.clone()).stall_after(bytes_of(&partial)),
        Reply::sse(200, openai::answer("after the stall")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, took) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "after the stall\n");
    assert_eq!(retries(&r), ["stalled"]);
    assert!(
        took >= Duration::from_secs(1),
        "the idle timeout is 1 s: {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_always_stalls_ends_in_exit_5_not_a_hang() {
    let partial = partial_openai();
    let cut = bytes_of(&partial);
    let server =
        MockServer::start_with(move |_| Reply::sse(200, partial_openai()).stall_after(cut)).await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, took) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert!(
        result["reason"].as_str().unwrap().contains("stalled"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 3);
    // Three attempts of 1 s idle each, plus start-up: well under the bound.
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_tool_arguments_become_an_error_result_the_model_can_fix() {
    let server = MockServer::start(vec![
        openai_tool_reply("call_bad", "Read", &["{\"filepath\": ", "\"notes.txt\""]),
        openai_tool_reply("call_good", "Read", &["{\"filepath\": \"notes.txt\"}"]),
        Reply::sse(200, openai::answer("read it")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let bad = last_tool_result(&requests[1]);
    assert_eq!(bad["tool_call_id"], "call_bad");
    let text = bad["content"].as_str().unwrap();
    assert!(text.contains("not valid JSON"), "{text}");
    // The call itself goes back to the model verbatim, so it can see what it sent.
    let msgs = requests[1].json()["messages"].as_array().unwrap().clone();
    let call = &msgs[msgs.len() - 2]["tool_calls"][0]["function"];
    assert_eq!(call["arguments"], "{\"filepath\": \"notes.txt\"");
    let good = last_tool_result(&requests[2]);
    assert!(
        good["content"].as_str().unwrap().contains("hello notes"),
        "{good}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_becomes_an_error_result_naming_the_real_tools() {
    let server = MockServer::start(vec![
        openai_tool_reply("call_x", "Teleport", &["{\"to\": \"mars\"}"]),
        Reply::sse(200, openai::answer("ok, no teleport")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let result = last_tool_result(&requests[1]);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.contains("Unknown tool") && text.contains("Teleport"),
        "{text}"
    );
    assert!(text.contains("Read") && text.contains("Bash"), "{text}");
    let finished = r.events_of("tool.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "error");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_command_argument_gets_an_error_result_not_a_crash() {
    // A 256 KiB command in 32 KiB pieces: larger than the kernel allows for one argument of
    // `bash -c`, so it cannot run. The model must be told (it can write a script instead)
    // and the run must go on; it used to stop with exit 6 ("could not start bash").
    let command = format!("echo {}", "x".repeat(256 << 10));
    let args = json!({ "command": command }).to_string();
    let server = MockServer::start_with(move |request| {
        if request.json()["messages"].to_string().contains("call_big") {
            return Reply::sse(200, openai::answer("too big, noted"));
        }
        let pieces: Vec<&str> = args
            .as_bytes()
            .chunks(32 << 10)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        openai_tool_reply("call_big", "Bash", &pieces)
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "openai",
        &server.url(),
        "permissions: {mode: auto}\n",
    );
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "too big, noted\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let result = last_tool_result(&requests[1]);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.len() < 1024,
        "the error result is short: {} bytes",
        text.len()
    );
    assert!(
        text.contains("too long") && text.contains("Write"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_argument_beyond_the_event_limit_is_refused_cleanly() {
    // One 9 MiB argument piece: a single SSE event over the 8 MiB limit. The decoder refuses
    // it without buffering the rest; every attempt fails the same way; exit 5.
    let huge = format!("{{\"command\": \"echo {}\"}}", "y".repeat(9 << 20));
    let server = MockServer::start_with(move |_| {
        let mut chunks = vec![openai::role()];
        chunks.extend(openai::tool_call(0, "call_huge", "Bash", &[&huge]));
        chunks.push(openai::done());
        Reply::sse(200, chunks)
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    // Writing 9 MiB can take over a second on a loaded machine: the idle timeout must not
    // decide this test, the event limit must.
    let text = std::fs::read_to_string(&j).unwrap();
    std::fs::write(&j, text.replace("idle_timeout: 1s", "idle_timeout: 60s")).unwrap();
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert!(
        result["reason"].as_str().unwrap().contains("exceeds"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_with_an_error_body_is_classified_and_retried() {
    let server = MockServer::start(vec![
        // A JSON error object with status 200.
        Reply::json(
            200,
            &json!({"error": {"message": "The server is overloaded", "type": "server_error"}}),
        ),
        // An error object inside an SSE stream that began normally.
        Reply::sse(
            200,
            [
                openai::role(),
                openai::error("server_error", "upstream died mid-answer"),
            ],
        ),
        Reply::sse(200, openai::answer("third time lucky")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "third time lucky\n");
    assert_eq!(retries(&r).len(), 2, "{:?}", retries(&r));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_with_a_fatal_error_body_exits_5_without_retrying() {
    let server = MockServer::start_with(|_| {
        Reply::json(
            200,
            &json!({"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        )
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("Invalid API key"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 1, "an auth error is not retried");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_reset_mid_stream_is_retried() {
    let partial = partial_openai();
    let server = MockServer::start(vec![
        Reply::sse(200, partial.clone()).reset_after(bytes_of(&partial) - 5),
        Reply::sse(200, openai::answer("after the reset")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "after the reset\n");
    assert_eq!(retries(&r), ["network"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn resets_every_time_end_in_exit_5() {
    let server =
        MockServer::start_with(|_| Reply::sse(200, openai::answer("never")).reset_after(40)).await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert_eq!(result["status"], "provider_error");
    assert_eq!(server.requests().len(), 3);
}

const GATEWAY_PAGE: &str = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_html_gateway_page_is_retried_and_its_title_reported() {
    let server = MockServer::start(vec![
        Reply::text(502, "text/html", GATEWAY_PAGE),
        Reply::sse(200, openai::answer("through the gateway")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "through the gateway\n");
    let retry = &r.events_of("model.retry")[0];
    let said = retry.to_string();
    assert!(said.contains("502"), "{said}");
    assert!(
        !said.contains("<html"),
        "raw HTML reached the events: {said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_html_page_with_status_200_ends_in_exit_5_saying_it_is_not_a_stream() {
    // A captive portal or a wrong api_base that serves a web page with 200.
    let server = MockServer::start_with(|_| {
        Reply::text(
            200,
            "text/html; charset=utf-8",
            "<html><head><title>Sign in to the Wi-Fi</title></head><body>...</body></html>",
        )
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    let reason = result["reason"].as_str().unwrap();
    assert!(reason.contains("text/html"), "{reason}");
    assert!(reason.contains("Sign in to the Wi-Fi"), "{reason}");
    assert!(!reason.contains("<html"), "{reason}");
    assert_eq!(
        server.requests().len(),
        1,
        "the same URL serves the same page"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_404_html_page_is_not_retried() {
    let server = MockServer::start_with(|_| {
        Reply::text(
            404,
            "text/html",
            "<html><head><title>404 Not Found</title></head><body>nope</body></html>",
        )
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "openai", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    assert!(
        result["reason"].as_str().unwrap().contains("404"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_overloaded_then_success() {
    let server = MockServer::start(vec![
        Reply::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        Reply::sse(
            200,
            [anthropic::message_start(20, 0, 0), anthropic::error("overloaded")],
        ),
        Reply::sse(200, anthropic::answer("calm again")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "anthropic", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "calm again\n");
    assert_eq!(retries(&r).len(), 2);
    assert!(server.requests().iter().all(|q| q.path == "/v1/messages"));
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_truncated_streams_end_in_exit_5() {
    let partial = vec![
        anthropic::message_start(20, 0, 0),
        anthropic::content_block_start_text(0),
        anthropic::text_delta(0, "half an ans"),
    ];
    let cut = bytes_of(&partial);
    let server = MockServer::start_with(move |_| {
        let mut chunks = partial.clone();
        chunks.extend(anthropic::answer("x"));
        Reply::sse(200, chunks).close_after(cut)
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), "anthropic", &server.url(), "");
    let (r, _) = run_bounded(tmp.path(), &j).await;
    let result = left_behind(&r, 5);
    // The body was cut inside its chunked encoding: a network error, retried twice.
    assert!(
        result["reason"].as_str().unwrap().contains("network error"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries(&r), ["network", "network"]);
    assert_eq!(
        r.stdout, "",
        "no half answer is printed as the final answer"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_truncated_tool_call_is_retried_not_run() {
    let start = vec![
        anthropic::message_start(20, 0, 0),
        anthropic::tool_use_start(0, "toolu_1", "Bash"),
        anthropic::input_json_delta(0, "{\"command\": \"touch SHOULD_NOT_EXIST"),
    ];
    let cut = bytes_of(&start);
    let server = MockServer::start(vec![
        Reply::sse(200, start).close_after(cut),
        Reply::sse(200, anthropic::answer("nothing ran")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "anthropic",
        &server.url(),
        "permissions: {mode: auto}\n",
    );
    let (r, _) = run_bounded(tmp.path(), &j).await;
    left_behind(&r, 0);
    assert_eq!(r.stdout, "nothing ran\n");
    assert!(
        !tmp.path().join("SHOULD_NOT_EXIST").exists(),
        "half a tool call was run"
    );
    assert!(r.events_of("tool.started").is_empty());
}
