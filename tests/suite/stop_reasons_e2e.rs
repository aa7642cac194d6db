//! Stop reasons are outcomes: an answer cut by the output limit gets one "continue" turn and
//! then fails (exit 1, `error_max_output_tokens`); a content-filter stop fails at once
//! (exit 1, `error_content_filter`). Both show in events, result.json and the step summary.

use serde_json::Value;

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::{anthropic, openai};

fn openai_cut(text: &str, reason: &str) -> Reply {
    Reply::sse(
        200,
        vec![
            openai::role(),
            openai::text(text),
            openai::finish(reason),
            openai::usage(100, 50, 0),
            openai::done(),
        ],
    )
}

fn anthropic_cut(text: &str, reason: &str) -> Reply {
    Reply::sse(
        200,
        vec![
            anthropic::message_start(100, 0, 0),
            anthropic::content_block_start_text(0),
            anthropic::text_delta(0, text),
            anthropic::content_block_stop(0),
            anthropic::message_delta(reason, 50),
            anthropic::message_stop(),
        ],
    )
}

/// The run, and the folder it ran in (dropped with it).
async fn run_against(
    provider: &str,
    server: &MockServer,
    extra_env: &[(&str, &str)],
) -> (Run, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let base = if provider == "openai" {
        format!("{}/v1", server.url())
    } else {
        server.url()
    };
    let job = format!(
        "version: 1\nname: cut\nmodel:\n  provider: {provider}\n  name: some-model\n  api_base: {base}\n  api_key_env: TEST_KEY\n  retry: {{max_retries: 0}}\nprompt: write an essay\n"
    );
    write_files(tmp.path(), &[("job.yaml", &job)]);
    let dir = tmp.path().to_path_buf();
    let env: Vec<(String, String)> = extra_env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg(dir.join("job.yaml"))
            .arg("-C")
            .arg(&dir)
            .env("TEST_KEY", "k-123");
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    (r, tmp)
}

fn incomplete(r: &Run) -> Vec<(String, String)> {
    r.events_of("output.incomplete")
        .iter()
        .map(|e| {
            (
                e["stop_reason"].as_str().unwrap().to_owned(),
                e["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn last_message(body: &Value) -> Value {
    body["messages"].as_array().unwrap().last().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_answer_is_continued_once_and_the_parts_join() {
    let server = MockServer::start(vec![
        openai_cut("The first half, ", "length"),
        openai_cut("and the second half.", "stop"),
    ])
    .await;
    let (r, _dir) = run_against("openai", &server, &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "The first half, and the second half.\n");
    assert_eq!(incomplete(&r), [("length".into(), "continue".into())]);
    let second = server.requests()[1].json();
    assert_eq!(last_message(&second)["content"], "continue");
    assert_eq!(last_message(&second)["role"], "user");
    assert_eq!(r.result()["stop_reason"], "stop");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_cut_twice_is_not_a_success() {
    let server = MockServer::start(vec![
        openai_cut("Half a sen", "length"),
        openai_cut("tence and still", "length"),
    ])
    .await;
    let (r, _dir) = run_against("openai", &server, &[]).await;
    assert_eq!(r.code, 1, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "failed");
    assert_eq!(result["subtype"], "error_max_output_tokens");
    assert_eq!(result["stop_reason"], "length");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "Half a sentence and still");
    assert_eq!(
        incomplete(&r),
        [
            ("length".into(), "continue".into()),
            ("length".into(), "fail".into())
        ]
    );
    assert_eq!(server.requests().len(), 2, "one continue, no more");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_filtered_answer_fails_at_once() {
    let server = MockServer::start(vec![openai_cut("I can", "content_filter")]).await;
    let (r, _dir) = run_against("openai", &server, &[]).await;
    assert_eq!(r.code, 1, "{r:#?}");
    let result = r.result();
    assert_eq!(result["subtype"], "error_content_filter");
    assert_eq!(result["stop_reason"], "content_filter");
    assert_eq!(incomplete(&r), [("content_filter".into(), "fail".into())]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_max_tokens_twice_fails_and_refusal_is_filtered() {
    let server = MockServer::start(vec![
        anthropic_cut("Part one", "max_tokens"),
        anthropic_cut(" part two", "max_tokens"),
    ])
    .await;
    let (r, _dir) = run_against("anthropic", &server, &[]).await;
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(r.result()["subtype"], "error_max_output_tokens");
    let second = server.requests()[1].json();
    assert_eq!(last_message(&second)["role"], "user");

    let server = MockServer::start(vec![anthropic_cut("", "refusal")]).await;
    let (r, _dir) = run_against("anthropic", &server, &[]).await;
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(r.result()["subtype"], "error_content_filter");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_answer_shows_in_the_step_summary() {
    let server = MockServer::start(vec![
        openai_cut("cut", "length"),
        openai_cut(" again", "length"),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "").unwrap();
    let summary_path = summary.display().to_string();
    let (r, _dir) = run_against(
        "openai",
        &server,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", &summary_path),
        ],
    )
    .await;
    assert_eq!(r.code, 1, "{r:#?}");
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("stop reason `length`"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_cut_while_calling_a_tool_is_not_continued() {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(
        0,
        "c1",
        "List",
        &["{\"dirpath\": \".\"}"],
    ));
    chunks.push(openai::finish("length"));
    chunks.push(openai::done());
    let server =
        MockServer::start(vec![Reply::sse(200, chunks), openai_cut("Listed.", "stop")]).await;
    let (r, _dir) = run_against("openai", &server, &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "Listed.\n");
    assert!(incomplete(&r).is_empty());
    assert_eq!(last_message(&server.requests()[1].json())["role"], "tool");
}
