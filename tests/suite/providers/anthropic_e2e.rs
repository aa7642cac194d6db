//! The binary against a local server streaming Anthropic Messages SSE: an overloaded error
//! once, then a tool run; the requests pair tool_use with tool_result and mark the system
//! prompt and tool list for the prompt cache.

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{cn_run, run, write_files};
use crate::support::sse::anthropic as a;

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_tool_run_with_one_overload() {
    let tool_turn = vec![
        a::message_start(900, 800, 0),
        a::content_block_start_text(0),
        a::text_delta(0, "Reading."),
        a::content_block_stop(0),
        a::tool_use_start(1, "toolu_1", "Read"),
        a::input_json_delta(1, "{\"filepath\":"),
        a::input_json_delta(1, " \"notes.txt\"}"),
        a::content_block_stop(1),
        a::message_delta("tool_use", 40),
        a::message_stop(),
    ];
    let server = MockServer::start(vec![
        Reply::sse(
            200,
            vec![a::message_start(10, 0, 0), a::error("overloaded_error")],
        ),
        Reply::sse(200, tool_turn),
        Reply::sse(200, a::answer("The notes say hello.")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: anthropic, name: claude-sonnet-4-5, api_base: {}, retry: {{max_retries: 2, initial_delay: 10ms}}}}\nprompt: read the notes\n",
        server.url()
    );
    write_files(tmp.path(), &[("job.yaml", &job), ("notes.txt", "hello\n")]);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .env("ANTHROPIC_API_KEY", "sk-ant-test-000000");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "The notes say hello.\n");
    assert_eq!(r.events_of("model.retry").len(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test-000000"));
    let body = requests[2].json();
    assert!(
        body["system"][0]["cache_control"].is_object(),
        "{}",
        body["system"]
    );
    assert!(body["tools"].as_array().unwrap().last().unwrap()["cache_control"].is_object());
    let msgs = body["messages"].as_array().unwrap();
    let tool_use = msgs[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_use["id"], "toolu_1");
    assert_eq!(tool_use["input"]["filepath"], "notes.txt");
    let tool_result = msgs[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    assert_eq!(tool_result["tool_use_id"], "toolu_1");
    let result = r.result();
    assert_eq!(result["usage"]["cache_read_input_tokens"], 800);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert!(!result.to_string().contains("sk-ant-test"));
}
