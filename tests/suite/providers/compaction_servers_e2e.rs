//! Long runs against the replays of strict servers: 300 tool turns in an 8k window, several
//! compactions, against Anthropic (Claude Opus 4.6+, which refuses an assistant prefill),
//! Mistral (whose validator refuses a last assistant turn and, before April 2026, a user turn
//! after tool results) and an OpenAI-compatible server (llama.cpp, whose chat template reads a
//! last assistant turn as a prefill), natively and with `tool_call_format: text`.
//!
//! Every answer is the family's recorded stream (`tests/fixtures/servers/`), its call id made
//! unique per turn; every request is checked the way the server checks it (support/strict.rs)
//! and answered with the server's own refusal when it breaks a rule, so a history that ends
//! with the assistant's summary fails the run as it would against the real server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::replay::{fixture, http_fixture};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::strict::{anthropic_refusal, mistral_refusal, openai_problem};

const WINDOW: usize = 8192;
const TURNS: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    Anthropic,
    Mistral,
    LlamaCpp,
    /// llama.cpp with `tool_call_format: text`.
    LlamaCppText,
}

impl Family {
    fn server(self) -> &'static str {
        match self {
            Family::Anthropic => "anthropic",
            Family::Mistral => "mistral",
            Family::LlamaCpp | Family::LlamaCppText => "llamacpp",
        }
    }

    fn model_yaml(self, url: &str) -> String {
        match self {
            Family::Anthropic => {
                format!("  provider: anthropic\n  name: claude-opus-4-6\n  api_base: {url}\n")
            }
            Family::Mistral => {
                format!("  provider: openai\n  name: mistral-small-latest\n  api_base: {url}/v1\n")
            }
            Family::LlamaCpp => format!(
                "  provider: openai\n  name: qwen2.5-coder-7b-instruct\n  api_base: {url}/v1\n"
            ),
            Family::LlamaCppText => format!(
                "  provider: openai\n  name: qwen2.5-coder-7b-instruct\n  api_base: {url}/v1\n  tool_call_format: text\n"
            ),
        }
    }

    /// What the server refuses in `body` (its refusal's reply), if anything.
    fn refusal(self, body: &Value) -> Option<(String, Reply)> {
        match self {
            Family::Anthropic => anthropic_refusal(body).map(|r| {
                let reply = if r.ends_with(".http") {
                    http_fixture("anthropic", &r).reply()
                } else {
                    Reply::json(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": r}}))
                };
                (r, reply)
            }),
            Family::Mistral => mistral_refusal(body)
                .map(|file| (file.to_owned(), http_fixture("mistral", file).reply())),
            Family::LlamaCpp | Family::LlamaCppText => openai_problem(body).map(|p| {
                let reply = Reply::json(400, &json!({"error": {"code": 400, "message": p, "type": "invalid_request_error"}}));
                (p, reply)
            }),
        }
    }

    /// Turn `n`'s tool call: the family's recorded call with its id made unique.
    fn tool_reply(self, n: usize) -> Reply {
        let recorded = fixture(self.server(), "tool.sse");
        if self == Family::LlamaCppText {
            let block = format!(
                "<tool>{}</tool>",
                json!({"name": "Read", "arguments": {"filepath": "notes.txt"}})
            );
            let text = fixture("llamacpp", "text.sse");
            let body = text
                .body
                .replacen(
                    "\"content\":\"Hello\"",
                    &format!("\"content\":{}", json!(block)),
                    1,
                )
                .replacen("\"content\":\" from llama.cpp.\"", "\"content\":\"\"", 1);
            return crate::support::replay::Fixture { body, ..text }.reply();
        }
        let id = recorded.call_id().to_owned();
        let unique: String = format!("{n:0>width$}", width = id.len());
        let unique = match self {
            Family::Anthropic => format!("toolu_{}", &unique[6..]),
            _ => unique,
        };
        let body = recorded.body.replace(&id, &unique);
        crate::support::replay::Fixture { body, ..recorded }.reply()
    }

    fn text_reply(self) -> Reply {
        fixture(self.server(), "text.sse").reply()
    }
}

/// The text of every message (and the tools), as a server counts its input, in o200k tokens.
fn tokens(body: &Value) -> usize {
    fn strings(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push(' ');
            }
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(map) => map.values().for_each(|i| strings(i, out)),
            _ => {}
        }
    }
    let mut text = String::new();
    strings(&body["messages"], &mut text);
    strings(&body["system"], &mut text);
    strings(&body["tools"], &mut text);
    let count = body["messages"].as_array().map_or(0, Vec::len);
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&text)
        .len()
        + 4 * count
}

fn is_compaction(body: &Value) -> bool {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    let text = last["content"].to_string();
    text.contains(&cn_run::context::compaction::COMPACTION_PROMPT.replace('"', "\\\"")[..60])
}

struct Replay {
    server: MockServer,
    problems: Arc<Mutex<Vec<String>>>,
    compaction_requests: Arc<AtomicUsize>,
}

async fn replay(family: Family) -> Replay {
    let turns = Arc::new(AtomicUsize::new(0));
    let problems = Arc::new(Mutex::new(Vec::new()));
    let compactions = Arc::new(AtomicUsize::new(0));
    let (t, p, c) = (turns.clone(), problems.clone(), compactions.clone());
    let server = MockServer::start_with(move |req: &RecordedRequest| {
        let body = req.json();
        if let Some((why, reply)) = family.refusal(&body) {
            p.lock().unwrap().push(why);
            return reply;
        }
        let used = tokens(&body);
        if used + 1024 > WINDOW {
            p.lock()
                .unwrap()
                .push(format!("a request of {used} tokens (+1024) over {WINDOW}"));
        }
        if is_compaction(&body) {
            c.fetch_add(1, Ordering::SeqCst);
            return family.text_reply();
        }
        let n = t.fetch_add(1, Ordering::SeqCst);
        if n < TURNS {
            family.tool_reply(n)
        } else {
            family.text_reply()
        }
    })
    .await;
    Replay {
        server,
        problems,
        compaction_requests: compactions,
    }
}

async fn long_run(family: Family) -> (Run, Replay, tempfile::TempDir) {
    let replay = replay(family).await;
    let tmp = tempfile::tempdir().unwrap();
    // About 1.3k tokens per read: the window fills every few turns.
    let notes = "The build log says the parser failed on line 42 of src/lexer.rs. ".repeat(90);
    let job = format!(
        "version: 1\nmodel:\n{}  api_key_env: TEST_KEY\n  context_length: {WINDOW}\n  max_tokens: 1024\n  retry: {{max_retries: 1, initial_delay: 10ms}}\nprompt: keep reading the notes\nlimits: {{max_turns: 400}}\npermissions: {{mode: auto}}\n",
        family.model_yaml(&replay.server.url())
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("notes.txt", &notes)]);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg(dir.join("job.yaml"))
            .arg("-C")
            .arg(&dir)
            .arg("--quiet")
            .env("TEST_KEY", "k-long-run");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    (r, replay, tmp)
}

/// The run finishes with the family's answer, no request was refused or over the window,
/// several compactions happened, and each left a history ending with the user.
async fn assert_completes(family: Family) {
    let (r, replay, _tmp) = long_run(family).await;
    let problems = replay.problems.lock().unwrap().clone();
    assert!(
        problems.is_empty(),
        "{family:?}: {} refused or oversized requests, first: {:?}",
        problems.len(),
        problems.first()
    );
    assert_eq!(r.code, 0, "{family:?}: {}", r.stderr);
    let compactions = r.events_of("compaction");
    assert!(
        compactions.len() >= 30,
        "{family:?}: only {} compactions",
        compactions.len()
    );
    assert!(replay.compaction_requests.load(Ordering::SeqCst) >= compactions.len());
    for replaced in r.events_of("history.replaced") {
        let last = replaced["history"].as_array().unwrap().last().unwrap();
        assert_eq!(last["role"], "user", "{family:?}: {last}");
    }
    let turns = r.result()["num_turns"].as_u64().unwrap();
    assert!(turns > TURNS as u64, "{family:?}: {turns} turns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_300_turn_run_with_compactions_completes_against_every_strict_family() {
    let runs = [
        Family::Anthropic,
        Family::Mistral,
        Family::LlamaCpp,
        Family::LlamaCppText,
    ]
    .map(|family| tokio::spawn(assert_completes(family)));
    for run in runs {
        run.await.unwrap();
    }
}
