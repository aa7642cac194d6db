//! Long runs: a 300-turn run in an 8k context window with large tool outputs finishes;
//! no request the server receives exceeds the window or holds an orphaned tool result;
//! a context-length error from the provider leads to compaction and one retry.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::openai;

const WINDOW: usize = 8192;

fn tool_reply(id: &str, command: &str) -> Reply {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(
        0,
        id,
        "Bash",
        &[&json!({"command": command}).to_string()],
    ));
    chunks.extend([
        openai::finish("tool_calls"),
        openai::usage(100, 20, 0),
        openai::done(),
    ]);
    Reply::sse(200, chunks)
}

fn is_compaction(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| {
            m["role"] == "user"
                && m["content"]
                    .as_str()
                    .is_some_and(|c| c.contains(cn_run::context::compaction::COMPACTION_PROMPT))
        })
}

/// Problems with a request: over the window (counted with o200k, messages and tools), or a
/// tool result whose call is not in an earlier assistant message.
fn violations(body: &Value) -> Vec<String> {
    // Count as a provider does: the text of every message (plus a few tokens of framing
    // each), tool-call arguments, and the tool definitions.
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |s: &str| bpe.encode_ordinary(s).len();
    let mut tokens = count(&body["tools"].to_string());
    for m in body["messages"].as_array().into_iter().flatten() {
        tokens += 4 + count(m["content"].as_str().unwrap_or_default());
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            tokens += 4 + count(&c["function"].to_string());
        }
    }
    let mut out = Vec::new();
    if tokens + 1024 > WINDOW {
        out.push(format!("request of {tokens} tokens (+1024 reply) exceeds {WINDOW} (compaction: {}, {} messages, tools {})", is_compaction(body), body["messages"].as_array().map_or(0, Vec::len), count(&body["tools"].to_string())));
    }
    let mut calls = HashSet::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls.insert(c["id"].as_str().unwrap_or_default().to_owned());
        }
        if m["role"] == "tool" && !calls.contains(m["tool_call_id"].as_str().unwrap_or_default()) {
            out.push(format!("orphaned tool result {}", m["tool_call_id"]));
        }
    }
    out
}

fn job(dir: &Path, url: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nmodel:\n  provider: openai\n  name: gpt-4o\n  api_base: {url}\n  context_length: {WINDOW}\n  max_tokens: 1024\n  retry: {{max_retries: 1, initial_delay: 10ms}}\nprompt: keep counting\nlimits: {{max_turns: 400}}\npermissions: {{mode: auto}}\n"
    );
    write_files(dir, &[("job.yaml", &job)]);
    dir.join("job.yaml")
}

async fn run_binary(dir: &Path) -> Run {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg(dir.join("job.yaml"))
            .arg("-C")
            .arg(&dir)
            .arg("--quiet");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_300_turn_run_in_an_8k_window_never_overflows() {
    let turns = Arc::new(AtomicUsize::new(0));
    let problems = Arc::new(Mutex::new(Vec::new()));
    let (t, p) = (turns.clone(), problems.clone());
    let server = MockServer::start_with(move |req: &RecordedRequest| {
        let body = req.json();
        p.lock().unwrap().extend(violations(&body));
        if is_compaction(&body) {
            return Reply::sse(
                200,
                openai::answer("Summary: the task is to keep counting; many seq runs done so far."),
            );
        }
        let n = t.fetch_add(1, Ordering::SeqCst);
        if n < 300 {
            // About 1.4k tokens of output each: the window fills every few turns.
            tool_reply(&format!("call_{n}"), "seq 100000 100600")
        } else {
            Reply::sse(200, openai::answer("counted 300 times"))
        }
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), &server.url());
    let r = run_binary(tmp.path()).await;
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    assert_eq!(r.stdout, "counted 300 times\n");
    let problems = problems.lock().unwrap().clone();
    assert!(
        problems.is_empty(),
        "{} bad requests, first: {:?}",
        problems.len(),
        problems.first()
    );
    let compactions = r.events_of("compaction");
    assert!(
        compactions.len() >= 30,
        "only {} compactions",
        compactions.len()
    );
    for c in &compactions {
        assert!(
            c["tokens_after"].as_u64().unwrap() < c["tokens_before"].as_u64().unwrap(),
            "{c}"
        );
    }
    // 300 tool turns and the answer (+1 when the answer came right after a compaction and
    // the run asked the model once to continue).
    let turns = r.result()["num_turns"].as_u64().unwrap();
    assert!((301..=302).contains(&turns), "{turns}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_length_error_compacts_and_retries_once() {
    let server = MockServer::start(vec![
        Reply::json(400, &json!({"error": {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}})),
        Reply::sse(200, openai::answer("Summary: nothing done yet.")),
        Reply::sse(200, openai::answer("done after compaction")),
        // A model that stops right after a compaction is asked once to go on (as cn does).
        Reply::sse(200, openai::answer("really done")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), &server.url());
    let r = run_binary(tmp.path()).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "really done\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_compaction(&requests[1].json()));
    let last = requests[3].json();
    assert_eq!(
        last["messages"].as_array().unwrap().last().unwrap()["content"],
        "continue"
    );
    assert_eq!(r.events_of("compaction").len(), 1);
}
