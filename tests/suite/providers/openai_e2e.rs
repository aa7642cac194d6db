//! The binary against a local server that streams real OpenAI chat-completions SSE bytes:
//! a multi-turn tool run, retries with Retry-After, and an outage that ends in exit 5.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, git, run, write_files};
use crate::support::sse::openai;

fn tool_reply(calls: &[(&str, &str, &[&str])]) -> Reply {
    let mut chunks = vec![openai::role()];
    for (i, (id, name, pieces)) in calls.iter().enumerate() {
        chunks.extend(openai::tool_call(i, id, name, pieces));
    }
    chunks.push(openai::finish("tool_calls"));
    chunks.push(openai::usage(120, 30, 20));
    chunks.push(openai::done());
    Reply::sse(200, chunks)
}

fn job(dir: &Path, url: &str, extra: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nname: oa\nmodel:\n  provider: openai\n  name: gpt-4o\n  api_base: {url}/v1\n  api_key_env: TEST_OPENAI_KEY\n  retry: {{max_retries: 3, initial_delay: 10ms}}\nprompt: look around\n{extra}"
    );
    write_files(dir, &[("job.yaml", &job), ("notes.txt", "hello notes\n")]);
    dir.join("job.yaml")
}

async fn run_binary(dir: &Path, job: &Path) -> Run {
    let (dir, job) = (dir.to_path_buf(), job.to_path_buf());
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg(&job)
            .arg("-C")
            .arg(&dir)
            .env("TEST_OPENAI_KEY", "sk-test-KEY-0123456789");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_turn_tool_run_over_real_sse() {
    let server = MockServer::start(vec![
        tool_reply(&[
            ("call_list", "List", &["{\"dir", "path\": \".\"}"]),
            (
                "call_read",
                "Read",
                &["{\"file", "path\":", " \"notes.txt\"}"],
            ),
        ]),
        tool_reply(&[("call_bash", "Bash", &["{\"command\": \"wc -l notes.txt\"}"])]),
        Reply::sse(200, openai::answer("notes.txt has one line.")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), &server.url(), "");
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "notes.txt has one line.\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|q| q.path == "/v1/chat/completions"));
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-KEY-0123456789")
    );
    let body = requests[0].json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["content"], "look around");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"Read") && tools.contains(&"Bash") && tools.contains(&"MultiEdit"),
        "{tools:?}"
    );
    // The second request carries both results, in call order, with the right ids.
    let msgs = requests[1].json()["messages"].as_array().unwrap().clone();
    let assistant = &msgs[2];
    assert_eq!(assistant["tool_calls"][0]["id"], "call_list");
    assert_eq!(
        assistant["tool_calls"][1]["function"]["arguments"],
        "{\"filepath\": \"notes.txt\"}"
    );
    assert_eq!(
        (msgs[3]["role"].clone(), msgs[3]["tool_call_id"].clone()),
        (json!("tool"), json!("call_list"))
    );
    assert_eq!(msgs[4]["tool_call_id"], "call_read");
    assert!(msgs[4]["content"].as_str().unwrap().contains("hello notes"));
    let third = requests[2].json();
    let last = third["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["tool_call_id"], "call_bash");
    assert!(
        last["content"].as_str().unwrap().contains("1 notes.txt"),
        "{last}"
    );

    let result = r.result();
    assert_eq!(result["num_turns"], 3);
    // claude -p's meaning: input_tokens leaves out what the cache served.
    assert_eq!(result["usage"]["input_tokens"], 210);
    assert_eq!(result["usage"]["cache_read_input_tokens"], 40);
    assert_eq!(result["usage"]["total_input_tokens"], 250);
    assert!(
        result["total_cost_usd"].as_f64().unwrap() > 0.0,
        "gpt-4o has a known price"
    );
    let events = r.events();
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "tool.finished")
            .count(),
        3
    );
    assert_eq!(events.last().unwrap()["type"], "run.completed");
    // The key reached the server and nothing else.
    let all = std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap()
        + &std::fs::read_to_string(tmp.path().join("out/result.json")).unwrap()
        + &std::fs::read_to_string(tmp.path().join("out/session.jsonl")).unwrap()
        + &r.stderr;
    assert!(!all.contains("sk-test-KEY"), "the key leaked");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_429_then_500_then_success() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            &json!({"error": {"message": "slow down", "type": "rate_limit_exceeded"}}),
        )
        .with_header("Retry-After", "0"),
        Reply::json(
            500,
            &json!({"error": {"message": "oops", "type": "server_error"}}),
        ),
        Reply::sse(200, openai::answer("fine")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), &server.url(), "");
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "fine\n");
    assert_eq!(server.requests().len(), 3);
    let retries = r.events_of("model.retry");
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["error_kind"], "rate_limited");
    assert_eq!(retries[1]["error_kind"], "server");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_ends_in_exit_5_with_the_reason() {
    let server = MockServer::start_with(|_| {
        Reply::json(503, &json!({"error": {"message": "upstream unavailable"}}))
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), &server.url(), "");
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 5, "{r:#?}");
    assert_eq!(server.requests().len(), 4, "the first try and 3 retries");
    let result = r.result();
    assert_eq!(result["status"], "provider_error");
    assert!(
        result["reason"].as_str().unwrap().contains("503"),
        "{result}"
    );
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("upstream unavailable"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_key_is_not_retried_and_not_echoed() {
    let server = MockServer::start_with(|_| {
        Reply::json(401, &json!({"error": {"message": "Incorrect API key provided: sk-test-KEY-0123456789", "type": "invalid_request_error"}}))
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), &server.url(), "");
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 5);
    assert_eq!(server.requests().len(), 1);
    let result: Value = r.result();
    assert!(!result.to_string().contains("sk-test-KEY"), "{result}");
    assert!(!r.stderr.contains("sk-test-KEY"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_not_in_the_commands_environment() {
    let server = MockServer::start(vec![
        tool_reply(&[(
            "call_env",
            "Bash",
            &["{\"command\": \"echo key=${TEST_OPENAI_KEY:-unset}; env | grep -c sk-test || true\"}"],
        )]),
        Reply::sse(200, openai::answer("done")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        &server.url(),
        "permissions:\n  allow: ['Bash(echo *)', 'Bash(env*)']\n",
    );
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].json();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["tool_call_id"], "call_env");
    let output = last["content"].as_str().unwrap();
    // Neither the variable nor any other variable holding the key's value reaches Bash.
    assert!(output.contains("key=unset"), "{output}");
    assert!(output.contains("\n0"), "{output}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_system_message_carries_the_git_status_at_start() {
    let server = MockServer::start(vec![Reply::sse(200, openai::answer("seen"))]).await;
    let tmp = tempfile::tempdir().unwrap();
    let j = job(tmp.path(), &server.url(), "");
    let git = |args: &[&str]| git(tmp.path(), args);
    git(&["init", "-q"]);
    git(&["add", "notes.txt", "job.yaml"]);
    git(&["commit", "-qm", "start"]);
    std::fs::write(tmp.path().join("notes.txt"), "changed\n").unwrap();
    std::fs::write(tmp.path().join("new.txt"), "new\n").unwrap();
    let r = run_binary(tmp.path(), &j).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let body = server.requests()[0].json();
    let system = body["messages"][0]["content"].as_str().unwrap().to_owned();
    // Taken by the checkpointer before its start snapshot: the user's changes, as git
    // shows them.
    assert!(system.contains(" M notes.txt"), "{system}");
    assert!(system.contains("?? new.txt"), "{system}");
    assert!(!system.contains("Working tree clean"), "{system}");
}
