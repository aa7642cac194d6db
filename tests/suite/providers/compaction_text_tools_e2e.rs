//! The compaction request is built like every other request: a job with
//! `model.tool_call_format: text` sends no native `tools` in it, keeps the tools described in
//! the system prompt and its history in the `<tool>`/`<tool_result>` text form — for both
//! providers, whether the compaction was forced by a context-length error or reached by the
//! threshold. A native-format run is the control: its compaction request does carry `tools`,
//! so the check below can fail.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::{anthropic as a, openai};

#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    OpenAi,
    Anthropic,
}

/// How the first compaction comes about.
#[derive(Clone, Copy, PartialEq)]
enum Trigger {
    /// The provider answers the second turn with a context-length error.
    ContextError,
    /// The tool output of the first turn pushes the next request past the threshold.
    Threshold,
}

fn is_compaction(body: &Value) -> bool {
    let last = body["messages"].as_array().and_then(|m| m.last());
    last.is_some_and(|m| {
        m["role"] == "user"
            && m["content"]
                .to_string()
                .contains("The context window is nearly full")
    })
}

fn answer(d: Dialect, text: &str) -> Reply {
    match d {
        Dialect::OpenAi => Reply::sse(200, openai::answer(text)),
        Dialect::Anthropic => Reply::sse(200, a::answer(text)),
    }
}

fn context_error(d: Dialect) -> Reply {
    match d {
        Dialect::OpenAi => Reply::json(
            400,
            &json!({"error": {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}}),
        ),
        Dialect::Anthropic => Reply::json(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
        ),
    }
}

/// The first turn's tool call, written as text (`text`) or as a native call.
fn first_call(d: Dialect, text: bool, trigger: Trigger) -> Reply {
    let (name, args) = match trigger {
        Trigger::ContextError => ("List", json!({"dirpath": "."})),
        Trigger::Threshold => ("Read", json!({"filepath": "big.txt"})),
    };
    if text {
        let call =
            format!("Looking.\n<tool>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool>");
        return answer(d, &call);
    }
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(0, "call_1", name, &[&args.to_string()]));
    chunks.extend([openai::finish("tool_calls"), openai::done()]);
    Reply::sse(200, chunks)
}

/// A job for the mock at `url`; the threshold variant gets a small window and a big file.
fn job(dir: &Path, d: Dialect, url: &str, text: bool, trigger: Trigger) {
    let (provider, base, name) = match d {
        Dialect::OpenAi => ("openai", format!("{url}/v1"), "old-model"),
        Dialect::Anthropic => ("anthropic", url.to_owned(), "claude-sonnet-4-5"),
    };
    let format = if text { "text" } else { "native" };
    let window = match trigger {
        Trigger::ContextError => 200_000,
        Trigger::Threshold => 32_000,
    };
    let job = format!(
        "version: 1\nmodel:\n  provider: {provider}\n  name: {name}\n  api_base: {base}\n  tool_call_format: {format}\n  context_length: {window}\n  max_tokens: 1024\n  retry: {{max_retries: 1, initial_delay: 10ms}}\nprompt: look around\npermissions: {{mode: auto}}\n"
    );
    let big: String = (0..3000)
        .map(|i| format!("line {i} of the big file\n"))
        .collect();
    write_files(dir, &[("job.yaml", &job), ("big.txt", &big)]);
}

/// A finished run, the compaction requests and the other requests the mock received.
struct Case {
    r: Run,
    compactions: Vec<Value>,
    others: Vec<Value>,
    /// The workspace (and the run's `out` folder), kept until the test ends.
    _dir: tempfile::TempDir,
}

/// Runs a job against a mock that records every compaction request it receives.
async fn run_case(d: Dialect, text: bool, trigger: Trigger) -> Case {
    let seen = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let turns = Arc::new(AtomicUsize::new(0));
    let (s, t) = (seen.clone(), turns.clone());
    let server = MockServer::start_with(move |req: &RecordedRequest| {
        let body = req.json();
        if is_compaction(&body) {
            s.lock().unwrap().0.push(body);
            return answer(d, "Summary: the task is to look around; List ran once.");
        }
        s.lock().unwrap().1.push(body);
        match (t.fetch_add(1, Ordering::SeqCst), trigger) {
            (0, _) => first_call(d, text, trigger),
            (1, Trigger::ContextError) => context_error(d),
            _ => answer(d, "done"),
        }
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), d, &server.url(), text, trigger);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .env("ANTHROPIC_API_KEY", "sk-ant-test-000000")
            .env("OPENAI_API_KEY", "sk-test-000000");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    let (compactions, others) = seen.lock().unwrap().clone();
    Case {
        r,
        compactions,
        others,
        _dir: tmp,
    }
}

/// What a text-format request must look like: no native tools, the tools described in the
/// system prompt, no native call or result anywhere in its history.
fn text_form_problems(d: Dialect, body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if body.get("tools").is_some_and(|t| !t.is_null()) {
        out.push(format!("native tools sent: {}", body["tools"]));
    }
    let system = match d {
        Dialect::OpenAi => body["messages"][0]["content"].to_string(),
        Dialect::Anthropic => body["system"].to_string(),
    };
    if !system.contains("You can call tools") {
        out.push("the system prompt does not describe the tools".to_owned());
    }
    let messages = body["messages"].to_string();
    for native in [
        "tool_calls",
        "\"role\":\"tool\"",
        "\"tool_use\"",
        "\"tool_result\"",
    ] {
        if messages.contains(native) {
            out.push(format!("a native {native} in the history"));
        }
    }
    out
}

async fn assert_text_compaction(d: Dialect, trigger: Trigger) {
    let Case {
        r,
        compactions,
        others,
        _dir,
    } = run_case(d, true, trigger).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.events_of("compaction").len(), 1, "{r:#?}");
    assert_eq!(compactions.len(), 1);
    let body = &compactions[0];
    let problems = text_form_problems(d, body);
    assert!(problems.is_empty(), "{problems:?}\n{body:#}");
    // The compaction request saw the text-form call and its result.
    let messages = body["messages"].to_string();
    assert!(messages.contains("<tool>"), "{messages}");
    assert!(messages.contains("<tool_result"), "{messages}");
    // Every normal request of the run kept the text form too.
    for other in &others {
        let problems = text_form_problems(d, other);
        assert!(problems.is_empty(), "{problems:?}\n{other:#}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_text_format_compaction_after_a_context_error_sends_no_native_tools() {
    assert_text_compaction(Dialect::OpenAi, Trigger::ContextError).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_text_format_compaction_after_a_context_error_sends_no_native_tools() {
    assert_text_compaction(Dialect::Anthropic, Trigger::ContextError).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_text_format_compaction_at_the_threshold_sends_no_native_tools() {
    assert_text_compaction(Dialect::OpenAi, Trigger::Threshold).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_text_format_compaction_at_the_threshold_sends_no_native_tools() {
    assert_text_compaction(Dialect::Anthropic, Trigger::Threshold).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn text_format_compaction_keeps_the_system_prompt_of_the_turns() {
    let Case {
        r,
        compactions,
        others,
        _dir,
    } = run_case(Dialect::OpenAi, true, Trigger::ContextError).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let system = |b: &Value| b["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(system(&compactions[0]), system(&others[0]));
}

/// The control: a native-format run's compaction request does carry the tools, so a
/// check for their absence can fail.
#[tokio::test(flavor = "multi_thread")]
async fn native_format_compaction_carries_native_tools() {
    for trigger in [Trigger::ContextError, Trigger::Threshold] {
        let Case {
            r,
            compactions,
            _dir,
            ..
        } = run_case(Dialect::OpenAi, false, trigger).await;
        assert_eq!(r.code, 0, "{r:#?}");
        assert_eq!(compactions.len(), 1, "{r:#?}");
        let tools = compactions[0]["tools"].as_array().map_or(0, Vec::len);
        assert!(tools > 0, "{:#}", compactions[0]);
        assert!(!text_form_problems(Dialect::OpenAi, &compactions[0]).is_empty());
    }
}
