//! PreCompact hooks (Claude Code's protocol) around cn-run's automatic compaction, end to
//! end against an OpenAI-compatible replay: the server's context-length error makes the run
//! compact, the fixture hooks (sh, Python, Node) see `trigger: auto`, and what they answer
//! takes effect — plain stdout joins the summary request's instructions, exit 2 or
//! `decision: block` leaves the history whole (no summary request is sent), `continue:
//! false` ends the run. Each has its control: without the hook the summary request has
//! no added instruction, and the compaction happens.

use std::path::Path;

use serde_json::{Value, json};

use super::hooks_e2e::{install_hooks, python};
use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::openai;

/// The instruction `pre_compact.sh` prints.
const INSTRUCTION: &str = "Keep the ticket number OPS-42";

fn context_error() -> Reply {
    Reply::json(
        400,
        &json!({"error": {"message": "This model's maximum context length is 8192 tokens.",
            "code": "context_length_exceeded"}}),
    )
}

/// The replies of a run that compacts once: the error, the summary, an answer, and the
/// answer to the one "continue" cn-run sends after a compaction.
fn compacting() -> Vec<Reply> {
    vec![
        context_error(),
        Reply::sse(200, openai::answer("Summary: nothing done yet.")),
        Reply::sse(200, openai::answer("done after compaction")),
        Reply::sse(200, openai::answer("really done")),
    ]
}

/// A run of a job over `url` with the PreCompact groups `groups` (YAML list items).
async fn run_job(ws: &Path, url: &str, groups: &str) -> Run {
    install_hooks(ws);
    let hooks = if groups.is_empty() {
        String::new()
    } else {
        format!("hooks:\n  PreCompact:\n{groups}")
    };
    let job = format!(
        "version: 1\nname: compacting\nmodel:\n  provider: openai\n  name: gpt-4o\n  api_base: {url}\n  context_length: 8192\n  max_tokens: 1024\n  retry: {{max_retries: 1, initial_delay: 10ms}}\nprompt: keep counting\npermissions: {{mode: auto}}\n{hooks}"
    );
    write_files(ws, &[("job.yaml", &job)]);
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&ws);
        cmd.arg("job.yaml").arg("--quiet");
        run(cmd, Some(&ws.join("out")))
    })
    .await
    .unwrap()
}

fn group(matcher: &str, command: &str) -> String {
    format!(
        "    - matcher: '{matcher}'\n      hooks: [{{type: command, command: '{command}', timeout: 20}}]\n"
    )
}

/// The text of the last message of request `body`.
fn last_message(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    last["content"].as_str().unwrap_or_default().to_owned()
}

fn is_summary_request(body: &Value) -> bool {
    last_message(body).contains(cn_run::context::compaction::COMPACTION_PROMPT)
}

/// The events each PreCompact hook read on stdin (`compact.log`).
fn hook_inputs(ws: &Path) -> Vec<Value> {
    std::fs::read_to_string(ws.join("compact.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_compact_hook_sees_the_compaction_and_its_stdout_instructs_the_summary() {
    for matcher in ["", "auto", "manual|auto", "*"] {
        let server = MockServer::start(compacting()).await;
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let r = run_job(
            ws,
            &server.url(),
            &group(matcher, "sh .hooks/pre_compact.sh"),
        )
        .await;
        assert_eq!(r.code, 0, "{matcher}: {r:#?}");
        let requests = server.requests();
        assert!(is_summary_request(&requests[1].json()), "{matcher}");
        let prompt = last_message(&requests[1].json());
        assert!(prompt.contains(INSTRUCTION), "{matcher}: {prompt}");
        let inputs = hook_inputs(ws);
        assert_eq!(inputs.len(), 1, "{matcher}: {inputs:?}");
        let input = &inputs[0];
        assert_eq!(input["hook_event_name"], "PreCompact");
        assert_eq!(input["trigger"], "auto");
        assert_eq!(input["custom_instructions"], "");
        assert_eq!(input["session_id"], r.result()["run_id"], "{input}");
        let transcript = std::fs::read_to_string(ws.join("transcript-before-compact.jsonl"))
            .expect("the hook copied the transcript it was named");
        assert!(transcript.contains("keep counting"), "{transcript}");
        let ran = r.events_of("hook.ran");
        assert_eq!(ran[0]["hook_event"], "PreCompact", "{ran:?}");
        assert_eq!(r.events_of("compaction").len(), 1);
    }
    // Control: without the hook the summary request carries no added instruction.
    let server = MockServer::start(compacting()).await;
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(tmp.path(), &server.url(), "").await;
    assert_eq!(r.code, 0, "{r:#?}");
    let prompt = last_message(&server.requests()[1].json());
    assert!(is_summary_request(&server.requests()[1].json()));
    assert!(!prompt.contains(INSTRUCTION), "{prompt}");
    assert!(!prompt.contains("Additional instructions"), "{prompt}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_compact_block_keeps_the_history_and_no_summary_is_asked_for() {
    let py = format!("{} .hooks/pre_compact_block.py", python());
    for (command, exit, reason) in [
        (py.as_str(), 2, "a migration is half done"),
        (
            "node .hooks/pre_compact_block.js",
            0,
            "compact only at a checkpoint",
        ),
    ] {
        let server = MockServer::start(vec![
            context_error(),
            Reply::sse(200, openai::answer("done with the whole history")),
        ])
        .await;
        let tmp = tempfile::tempdir().unwrap();
        let r = run_job(tmp.path(), &server.url(), &group("auto", command)).await;
        assert_eq!(r.code, 0, "{command}: {r:#?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{command}");
        assert!(
            !requests.iter().any(|q| is_summary_request(&q.json())),
            "{command}: no summary was asked for"
        );
        assert!(r.events_of("compaction").is_empty(), "{command}");
        let ran = r.events_of("hook.ran");
        assert_eq!(ran[0]["decision"], "block", "{command}: {ran:?}");
        assert_eq!(ran[0]["exit_code"], exit, "{command}: {ran:?}");
        let warned = r
            .events_of("warning")
            .iter()
            .any(|w| w["message"].as_str().unwrap_or_default().contains(reason));
        assert!(warned, "{command}: {:?}", r.events_of("warning"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_manual_only_pre_compact_hook_never_runs_on_an_automatic_compaction() {
    let server = MockServer::start(compacting()).await;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let block = format!("{} .hooks/pre_compact_block.py", python());
    let r = run_job(ws, &server.url(), &group("manual", &block)).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(hook_inputs(ws).is_empty(), "the hook did not run");
    assert!(r.events_of("hook.ran").is_empty());
    assert_eq!(r.events_of("compaction").len(), 1, "not blocked");
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_false_from_a_pre_compact_hook_ends_the_run() {
    let server = MockServer::start(compacting()).await;
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(tmp.path(), &server.url(), &group("", "node .hooks/halt.js")).await;
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(server.requests().len(), 1, "no summary, no further turn");
    let result = r.result();
    let text = result.to_string();
    assert!(text.contains("the change freeze is on"), "{text}");
    assert!(r.events_of("compaction").is_empty());
}
