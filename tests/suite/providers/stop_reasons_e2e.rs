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

/// The recorded streams of real servers for the stop reasons below (fixtures name sources).
mod replayed {
    use super::{incomplete, last_message, openai_cut};
    use crate::support::http::MockServer;
    use crate::support::replay::{fixture, run_replayed};

    const QUICK: &str = "  retry: {max_retries: 1, initial_delay: 10ms}\n";

    /// The context window filled while the model answered (Anthropic's
    /// `model_context_window_exceeded`, Mistral's `model_length`): the history is compacted —
    /// not "continue"d into the full window — and the work goes on after the summary.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_full_window_stop_compacts_and_the_work_goes_on() {
        for (server, file, word) in [
            (
                "anthropic",
                "context_window_exceeded.sse",
                "model_context_window_exceeded",
            ),
            ("mistral", "model_length.sse", "model_length"),
        ] {
            let text = fixture(server, "text.sse");
            let mock = MockServer::start(vec![
                fixture(server, file).reply(),
                text.reply(), // the summary
                text.reply(), // the answer
                text.reply(), // after the one "continue" following a compaction
            ])
            .await;
            let (r, _tmp) = run_replayed(server, &mock.url(), "Read the log.", QUICK).await;
            assert_eq!(r.code, 0, "{server}: {}", r.stderr);
            assert_eq!(
                incomplete(&r),
                [(word.to_owned(), "compact".to_owned())],
                "{server}"
            );
            assert_eq!(r.events_of("compaction").len(), 1, "{server}");
            let requests = mock.requests();
            assert_eq!(requests.len(), 4, "{server}");
            // The request after the summary ends with the user, asking to carry on.
            let after = last_message(&requests[2].json());
            assert_eq!(after["role"], "user", "{server}: {after}");
            assert!(
                after.to_string().contains("Carry on with the task"),
                "{after}"
            );
            assert_eq!(r.stdout, format!("{}\n", text.text()), "{server}");
        }
    }

    /// A window that fills again right after its compaction ends the run: no loop.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_window_full_again_after_its_compaction_ends_the_run() {
        let full = fixture("anthropic", "context_window_exceeded.sse");
        let text = fixture("anthropic", "text.sse");
        let mock = MockServer::start(vec![full.reply(), text.reply(), full.reply()]).await;
        let (r, _tmp) = run_replayed("anthropic", &mock.url(), "Read the log.", QUICK).await;
        assert_eq!(r.code, 5, "{}", r.stderr);
        let reason = r.result()["reason"].as_str().unwrap().to_owned();
        assert!(
            reason.contains("filled again right after a compaction"),
            "{reason}"
        );
        assert_eq!(mock.requests().len(), 3);
    }

    /// `pause_turn` continues the turn: the paused text and the rest join into the answer.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_paused_turn_goes_on_and_its_parts_join() {
        let paused = fixture("anthropic", "pause_turn.sse");
        let rest = fixture("anthropic", "text.sse");
        let mock = MockServer::start(vec![paused.reply(), rest.reply()]).await;
        let (r, _tmp) = run_replayed("anthropic", &mock.url(), "Search.", QUICK).await;
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, format!("{}{}\n", paused.text(), rest.text()));
        assert_eq!(incomplete(&r), [("pause_turn".into(), "continue".into())]);
        // The server tool's streamed input is no call of cn-run's.
        assert!(!r.stderr.contains("dropping a tool call"), "{}", r.stderr);
        let second = mock.requests()[1].json();
        assert_eq!(last_message(&second)["role"], "user");
    }

    /// Refused by the model (Anthropic `refusal`) or cut by Azure's filter mid-answer: exit 1,
    /// naming the server's word and, for Azure, the category.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_refusal_or_a_filtered_stream_fails_naming_which() {
        for (server, file, words) in [
            ("anthropic", "refusal.sse", "stop reason: refusal"),
            ("azure", "content_filter.sse", "content_filter: violence"),
        ] {
            let mock = MockServer::start(vec![fixture(server, file).reply()]).await;
            let (r, _tmp) = run_replayed(server, &mock.url(), "Write.", QUICK).await;
            assert_eq!(r.code, 1, "{server}: {}", r.stderr);
            let result = r.result();
            assert_eq!(result["subtype"], "error_content_filter", "{server}");
            let reason = result["reason"].as_str().unwrap();
            assert!(reason.contains(words), "{server}: {reason}");
        }
    }

    /// A stop word no table knows is never a silent success: the answer is taken as final,
    /// with an `output.incomplete` (`accept`) and a warning naming the word.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_unknown_stop_reason_is_accepted_saying_so() {
        for word in ["end_of_budget", "STOPPED_BY_POLICY_v2"] {
            let mock = MockServer::start(vec![openai_cut("All done.", word)]).await;
            let (r, _tmp) = run_replayed("vllm", &mock.url(), "Do it.", QUICK).await;
            assert_eq!(r.code, 0, "{word}: {}", r.stderr);
            assert_eq!(incomplete(&r), [(word.to_owned(), "accept".to_owned())]);
            let warnings = r.events_of("warning");
            assert!(
                warnings
                    .iter()
                    .any(|w| w["message"].as_str().unwrap().contains(word)),
                "{warnings:?}"
            );
            assert_eq!(r.result()["stop_reason"], word);
        }
    }
}
