//! `provider: script`: scripted turns replayed through the real assembly and retry code —
//! the benchmark's scenario format, `@name` tool references, fault injection, and the error
//! a job gets when its script runs out.

use std::time::Duration;

use cn_run::conversation::Message;
use cn_run::provider::script::ScriptClient;
use cn_run::provider::{FinishReason, ProviderError};

use crate::support::model::{hello, quick_retries, request, run, tool};

const IDLE: Duration = Duration::from_secs(10);

/// The benchmark's self-test scenario, as the bench keeps it.
const BENCH_SELFTEST: &str = r#"{"turns": [
  {"tool_calls": [{"name": "@weather", "arguments": {"city": "Paris", "unit": "celsius", "note": "a fairly long argument string so that it is streamed in several pieces"}},
                  {"name": "get_time", "arguments": {"tz": "Europe/Paris"}}]},
  {"text": "It is 21 degrees in Paris and the time is noon. This answer is streamed in pieces."}
]}"#;

/// A benchmark scenario with a top-level prompt.
const BENCH_TOOLS: &str = r#"{"prompt": "Explore this repository, then summarise.",
 "turns": [
  {"tool_calls": [{"name": "List", "arguments": {"dirpath": "."}}]},
  {"tool_calls": [{"name": "Read", "arguments": {"filepath": "README.md"}}]},
  {"tool_calls": [{"name": "Bash", "arguments": {"command": "tr -d '\\n' < data/big.log | head -c 20"}}]},
  {"text": "Done."}
]}"#;

#[tokio::test]
async fn benchmark_scenarios_replay_turn_by_turn() {
    let script = ScriptClient::from_str(BENCH_SELFTEST, "scripted").unwrap();
    let tools = vec![tool("get_weather_forecast"), tool("get_time")];
    let first = run(
        &script,
        &request(vec![Message::user("go")], tools.clone()),
        &quick_retries(0),
        IDLE,
    )
    .await;
    let calls = &first.turn().tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].name, "get_weather_forecast",
        "@weather resolves to the offered tool"
    );
    let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(args["city"], "Paris");
    assert_eq!(calls[1].name, "get_time");
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(first.turn().finish, Some(FinishReason::ToolCalls));

    let second = run(&script, &request(vec![], tools), &quick_retries(0), IDLE).await;
    assert_eq!(
        second.turn().text,
        "It is 21 degrees in Paris and the time is noon. This answer is streamed in pieces."
    );
    assert_eq!(second.streamed, second.turn().text);
    assert_eq!(second.turn().finish, Some(FinishReason::Stop));

    let tools_script = ScriptClient::from_str(BENCH_TOOLS, "scripted").unwrap();
    assert_eq!(tools_script.len(), 4);
    let mut names = Vec::new();
    for _ in 0..3 {
        let r = run(&tools_script, &hello(), &quick_retries(0), IDLE).await;
        names.push(r.turn().tool_calls[0].name.clone());
    }
    assert_eq!(names, ["List", "Read", "Bash"]);
}

#[tokio::test]
async fn the_benchmark_scenario_files_load_when_present() {
    let dir = std::path::Path::new("/work/shared/bench/scenarios");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return; // Only on machines that carry the benchmark; the inline copies above always run.
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let script = ScriptClient::from_file(&path, "scripted")
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!script.is_empty(), "{}", path.display());
        }
    }
}

#[tokio::test]
async fn at_read_resolves_case_insensitively() {
    let script = ScriptClient::from_str(
        "- tool_calls:\n    - name: \"@read\"\n      id: call_1\n      arguments: {filepath: README.md}\n",
        "scripted",
    )
    .unwrap();
    let req = request(vec![Message::user("x")], vec![tool("Write"), tool("Read")]);
    let r = run(&script, &req, &quick_retries(0), IDLE).await;
    let call = &r.turn().tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "Read"));
    assert_eq!(call.arguments, "{\"filepath\":\"README.md\"}");
}

#[tokio::test]
async fn running_out_of_turns_is_a_clear_error_that_is_not_retried() {
    let script = ScriptClient::from_str("turns:\n  - text: only one\n", "scripted").unwrap();
    assert_eq!(
        run(&script, &hello(), &quick_retries(3), IDLE)
            .await
            .turn()
            .text,
        "only one"
    );
    let r = run(&script, &hello(), &quick_retries(3), IDLE).await;
    assert_eq!(
        r.error().to_string(),
        "script provider: the script has no turn left for request 2 (it has 1 turns)"
    );
    assert!(r.retries.is_empty());
}

#[tokio::test]
async fn error_turns_are_retried_like_real_outages() {
    let yaml = "turns:
  - error: {kind: server, status: 503, message: down, retry_after_ms: 10}
  - text: 'partial '
    error: {kind: network}
  - error: {kind: rate_limited}
  - text: recovered
    usage: {input_tokens: 120, output_tokens: 30, cache_read_tokens: 100}
";
    let script = ScriptClient::from_str(yaml, "scripted").unwrap();
    let r = run(&script, &hello(), &quick_retries(5), IDLE).await;
    assert_eq!(r.turn().text, "recovered");
    assert_eq!(r.retry_kinds(), ["server", "network", "rate_limited"]);
    assert_eq!(r.retries[0].delay, Duration::from_millis(10));
    assert!(r.retries[0].message.contains("503") && r.retries[0].message.contains("down"));
    assert_eq!(r.streamed, "partial recovered");
    let usage = r.turn().usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens
        ),
        (120, 30, 100)
    );
}

#[tokio::test]
async fn permanent_error_turns_end_the_request() {
    for (kind, expected) in [
        ("auth", "auth"),
        ("quota", "quota"),
        ("context_length", "context_length"),
    ] {
        let script =
            ScriptClient::from_str(&format!("- error: {{kind: {kind}}}\n- text: never\n"), "s")
                .unwrap();
        let r = run(&script, &hello(), &quick_retries(5), IDLE).await;
        assert_eq!(r.error().kind(), expected);
        assert!(r.retries.is_empty());
    }
}

#[tokio::test]
async fn stalled_and_slow_turns_meet_the_idle_timeout() {
    let yaml = "- text: thinking...\n  error: {kind: stalled}\n- delay_ms: 400\n  text: too slow\n- text: in time\n";
    let script = ScriptClient::from_str(yaml, "scripted").unwrap();
    let r = run(
        &script,
        &hello(),
        &quick_retries(3),
        Duration::from_millis(150),
    )
    .await;
    assert_eq!(r.turn().text, "in time");
    assert_eq!(r.retry_kinds(), ["stalled", "stalled"]);
}

#[tokio::test]
async fn malformed_argument_strings_are_sent_verbatim() {
    let script = ScriptClient::from_str(
        r#"[{"tool_calls": [{"name": "Bash", "arguments": "{\"command\": \"ls"}], "finish": "length"}]"#,
        "scripted",
    )
    .unwrap();
    let r = run(&script, &hello(), &quick_retries(0), IDLE).await;
    assert_eq!(r.turn().tool_calls[0].arguments, "{\"command\": \"ls");
    assert_eq!(r.turn().finish, Some(FinishReason::Length));
}

#[test]
fn a_script_file_with_a_mistake_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "turns:\n  - text: fine\n  - tool_calls: [{nme: Read}]\n",
    )
    .unwrap();
    let err = ScriptClient::from_file(&path, "s").unwrap_err();
    assert!(matches!(err, ProviderError::Script(_)));
    let text = err.to_string();
    assert!(
        text.contains("broken.yaml") && text.contains("nme"),
        "{text}"
    );
    let missing = ScriptClient::from_file(&dir.path().join("nope.yaml"), "s").unwrap_err();
    assert!(missing.to_string().contains("nope.yaml"));
}
