//! Images from MCP tool results reach the model as image parts, shown by the request a
//! loopback provider received after the call: inside the `tool_result` for Anthropic, in a
//! user message of `image_url` parts after the tool results for an OpenAI vision model, and
//! as a note naming type and size for a model that takes no images, an image of a type
//! models refuse, one over the size limit and one that spells a registered secret.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, repo_root, run, write_files};
use crate::support::sse::{anthropic as a, openai as o};

/// A 1×1 PNG (70 bytes).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

fn fixture_server() -> String {
    format!("  fx:\n    command: {}\n", fixture().display())
}

/// server-everything over stdio, or `None` (with a message) when it is not installed.
fn everything_server() -> Option<String> {
    let dir = std::env::var_os("CN_RUN_MCP_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-ref"));
    let js = dir.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        eprintln!(
            "skipped: {} is not installed; run .ci/install-mcp-reference",
            js.display()
        );
        return None;
    }
    Some(format!(
        "  ev:\n    command: node\n    args: ['{}', stdio]\n    startup_timeout: 60s\n",
        js.display()
    ))
}

#[derive(Clone, Copy, Debug)]
enum Api {
    OpenAi(&'static str),
    Anthropic,
}

/// The provider's two replies: one call of `tool` with `args`, then a final answer.
fn replies(api: Api, tool: &str, args: &str) -> Vec<Reply> {
    match api {
        Api::OpenAi(_) => {
            let mut call = vec![o::role()];
            call.extend(o::tool_call(0, "call_1", tool, &[args]));
            call.extend([o::finish("tool_calls"), o::usage(10, 5, 0), o::done()]);
            vec![Reply::sse(200, call), Reply::sse(200, o::answer("done"))]
        }
        Api::Anthropic => {
            let call = vec![
                a::message_start(10, 0, 0),
                a::tool_use_start(0, "toolu_1", tool),
                a::input_json_delta(0, args),
                a::content_block_stop(0),
                a::message_delta("tool_use", 5),
                a::message_stop(),
            ];
            vec![Reply::sse(200, call), Reply::sse(200, a::answer("done"))]
        }
    }
}

/// Runs a job with `servers` whose model calls `tool` once; returns the run and the body of
/// the request that carried the tool's result.
async fn image_run(
    api: Api,
    servers: String,
    tool: &str,
    args: &str,
    env: &[(&str, &str)],
) -> (Run, Value) {
    let setup = Setup {
        replies: replies(api, tool, args),
        model: "",
        job: "",
        cli: &[],
    };
    image_run_with(api, servers, setup, env).await
}

/// What a run adds to the plain one: the provider's replies, job lines, command-line flags.
struct Setup<'a> {
    replies: Vec<Reply>,
    /// Added inside the `model:` map (`, tool_call_format: text`).
    model: &'a str,
    job: &'a str,
    cli: &'a [&'a str],
}

async fn image_run_with(
    api: Api,
    servers: String,
    setup: Setup<'_>,
    env: &[(&str, &str)],
) -> (Run, Value) {
    let server = MockServer::start(setup.replies).await;
    let model = match api {
        Api::OpenAi(name) => format!(
            "{{provider: openai, name: {name}, api_base: {}/v1, api_key_env: TEST_OPENAI_KEY{}}}",
            server.url(),
            setup.model
        ),
        Api::Anthropic => format!(
            "{{provider: anthropic, name: claude-sonnet-4-5, api_base: {}{}}}",
            server.url(),
            setup.model
        ),
    };
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {model}\nprompt: p\n{}mcp_servers:\n{servers}",
        setup.job
    );
    write_files(tmp.path(), &[("job.yaml", &job)]);
    let dir = tmp.path().to_path_buf();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let cli: Vec<String> = setup.cli.iter().map(|a| (*a).to_owned()).collect();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .args(cli)
            .env("TEST_OPENAI_KEY", "sk-test-KEY-0123456789")
            .env("ANTHROPIC_API_KEY", "sk-ant-test-000000")
            .envs(env);
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    let requests: Vec<RecordedRequest> = server.requests();
    assert_eq!(requests.len(), 2, "{r:#?}");
    (r, requests[1].json())
}

fn fixture_args(mime: &str, data: &str, repeat: usize) -> String {
    format!("{{\"mime\": \"{mime}\", \"data\": \"{data}\", \"repeat\": {repeat}}}")
}

/// The OpenAI tool message of `call_1` and the message after it.
fn openai_result(body: &Value) -> (Value, Value) {
    let messages = body["messages"].as_array().unwrap();
    let at = messages
        .iter()
        .position(|m| m["role"] == "tool" && m["tool_call_id"] == "call_1")
        .unwrap_or_else(|| panic!("no tool message: {body}"));
    (
        messages[at].clone(),
        messages.get(at + 1).cloned().unwrap_or(Value::Null),
    )
}

/// The Anthropic `tool_result` block of `toolu_1`.
fn anthropic_result(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == "toolu_1")
        .unwrap_or_else(|| panic!("no tool_result: {body}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_vision_model_gets_the_image_in_a_user_message_after_the_results() {
    let args = fixture_args("image/png", PNG, 1);
    for model in ["gpt-4o", "gpt-4.1-mini", "openai/gpt-5"] {
        let (_, body) = image_run(
            Api::OpenAi(model),
            fixture_server(),
            "mcp__fx__image",
            &args,
            &[],
        )
        .await;
        assert_eq!(image_parts(&body), 1, "{model}: {body}");
        let (tool, next) = openai_result(&body);
        let text = tool["content"].as_str().unwrap();
        assert!(
            text.contains("a picture:\n[image 1: image/png, 70 B]"),
            "{text}"
        );
        assert!(text.contains("follow in the next message"), "{text}");
        assert_eq!(next["role"], "user", "{model}: {body}");
        let parts = next["content"].as_array().unwrap();
        assert!(parts[0]["text"].as_str().unwrap().contains("call_1"));
        assert_eq!(parts[1]["type"], "image_url");
        assert_eq!(
            parts[1]["image_url"]["url"],
            format!("data:image/png;base64,{PNG}")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_gets_the_image_inside_the_tool_result() {
    let args = fixture_args("image/png", PNG, 1);
    let (_, body) = image_run(
        Api::Anthropic,
        fixture_server(),
        "mcp__fx__image",
        &args,
        &[],
    )
    .await;
    assert_eq!(image_parts(&body), 1, "{body}");
    let result = anthropic_result(&body);
    let parts = result["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "text");
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("[image 1: image/png, 70 B]")
    );
    assert_eq!(
        parts[1],
        serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_takes_no_images_gets_a_note_naming_type_and_size() {
    let args = fixture_args("image/png", PNG, 1);
    for model in [
        "deepseek-chat",
        "o3-mini",
        "my-local-llama",
        "gpt-3.5-turbo",
        "mistral-large-latest",
    ] {
        let (_, body) = image_run(
            Api::OpenAi(model),
            fixture_server(),
            "mcp__fx__image",
            &args,
            &[],
        )
        .await;
        assert_eq!(image_parts(&body), 0, "{model}: {body}");
        let (tool, _) = openai_result(&body);
        let text = tool["content"].as_str().unwrap();
        assert!(
            text.contains(
                "[image (image/png, 70 B) not shown: this model is not known to take images]"
            ),
            "{model}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn images_a_model_cannot_take_or_that_hold_a_secret_are_described_not_sent() {
    let secret = "tok-planted-9f8e7d6c5b4a3210";
    // The server puts the secret (given to it by name in its env:) into the picture's bytes.
    let servers = format!(
        "  fx:\n    command: {}\n    env: {{PICTURE: '${{DEPLOY_TOKEN}}'}}\n",
        fixture().display()
    );
    let cases = [
        (
            fixture_args("image/svg+xml", PNG, 1),
            "models take only PNG, JPEG, GIF and WebP",
        ),
        (fixture_args("image/bmp", PNG, 1), "models take only PNG"),
        (
            fixture_args("image/png", "AAAA", 1_800_000),
            "over the 5.0 MiB limit",
        ),
        (
            fixture_args("image/png", "@@not base64@@", 1),
            "not valid base64",
        ),
        (
            "{\"mime\": \"image/png\", \"data\": \"\", \"env\": \"PICTURE\"}".to_owned(),
            "it holds the value of a registered secret",
        ),
    ];
    for api in [Api::OpenAi("gpt-4o"), Api::Anthropic] {
        for (args, why) in &cases {
            let env = [("DEPLOY_TOKEN", secret)];
            let (r, body) = image_run(api, servers.clone(), "mcp__fx__image", args, &env).await;
            assert_eq!(image_parts(&body), 0, "{why}: {body:.3000}");
            let text = body.to_string();
            assert!(!text.contains("AAAAAAAAAAAA"), "{why}");
            assert!(text.contains(why), "{why}: {text:.3000}");
            assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
        }
    }
}

/// How many image parts a request carries (OpenAI `image_url`, Anthropic `image`).
fn image_parts(body: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![body];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if map
                    .get("type")
                    .is_some_and(|t| t == "image_url" || t == "image")
                {
                    count += 1;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everythings_tiny_image_reaches_both_providers_as_an_image() {
    let Some(servers) = everything_server() else {
        return;
    };
    let (_, body) = image_run(
        Api::OpenAi("gpt-4o"),
        servers.clone(),
        "mcp__ev__get-tiny-image",
        "{}",
        &[],
    )
    .await;
    let (tool, next) = openai_result(&body);
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("[image 1: image/png")
    );
    let url = next["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap_or_default();
    assert!(
        url.starts_with("data:image/png;base64,iVBOR"),
        "{body:.2000}"
    );
    let (_, body) = image_run(
        Api::Anthropic,
        servers,
        "mcp__ev__get-tiny-image",
        "{}",
        &[],
    )
    .await;
    let result = anthropic_result(&body);
    let image = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "image")
        .cloned()
        .unwrap_or_else(|| panic!("no image block: {result}"));
    assert_eq!(image["source"]["media_type"], "image/png");
    assert!(
        image["source"]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBOR")
    );
}

/// The provider's replies in text tool-call mode: `calls` `<tool>` blocks, then an answer.
fn text_replies(api: Api, calls: &[&str]) -> Vec<Reply> {
    let blocks: String = calls
        .iter()
        .map(|c| format!("<tool>{c}</tool>\n"))
        .collect();
    let say = |text: &str| match api {
        Api::OpenAi(_) => Reply::sse(200, o::answer(text)),
        Api::Anthropic => Reply::sse(200, a::answer(text)),
    };
    vec![say(&format!("Let me look.\n{blocks}")), say("done")]
}

fn image_call(mime: &str) -> String {
    format!(
        "{{\"name\": \"mcp__fx__image\", \"arguments\": {}}}",
        fixture_args(mime, PNG, 1)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn in_text_tool_mode_the_model_is_told_each_image_and_that_it_is_not_shown() {
    let one = [image_call("image/png")];
    let two = [image_call("image/png"), image_call("image/gif")];
    let apis = [
        Api::OpenAi("gpt-4o"),
        Api::OpenAi("deepseek-chat"),
        Api::OpenAi("openai/gpt-5"),
        Api::Anthropic,
    ];
    for api in apis {
        for (calls, untrusted) in [(&one[..], false), (&two[..], false), (&one[..], true)] {
            let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
            let cli: &[&str] = if untrusted { &["--untrusted"] } else { &[] };
            let setup = Setup {
                replies: text_replies(api, &calls),
                model: ", tool_call_format: text",
                job: "",
                cli,
            };
            let (r, body) = image_run_with(api, fixture_server(), setup, &[]).await;
            let case = format!("{api:?} {} call(s) untrusted={untrusted}", calls.len());
            assert_eq!(image_parts(&body), 0, "{case}: {body:.3000}");
            let text = body.to_string();
            // The call's arguments hold the bytes; the results must not.
            let results = &text[text.find("<tool_result name=").expect("a result block")..];
            assert!(
                !results.contains(PNG),
                "{case}: the image's bytes were sent as text"
            );
            assert!(
                !text.contains("\"tools\""),
                "{case}: native tools in text mode"
            );
            let notes = text
                .matches(
                    "not shown: with tool_call_format: text, tool results reach you as text only",
                )
                .count();
            assert_eq!(notes, calls.len(), "{case}: {text:.3000}");
            assert!(
                text.contains("[image 1 of this result (image/png, 70 B) not shown"),
                "{case}"
            );
            if calls.len() == 2 {
                assert!(text.contains("(image/gif, 70 B) not shown"), "{case}");
            }
            if untrusted {
                // The note is cn-run's: it comes after the untrusted marker's closing tag.
                let close = text.rfind("</untrusted-content-").expect("a marker");
                let note = text.find("not shown: with tool_call_format").unwrap();
                assert!(
                    note > close,
                    "{case}: the note is inside the untrusted marker"
                );
            }
            assert!(r.stdout.contains("done"), "{case}: {}", r.stdout);
        }
    }
}

/// The run's untrusted-marker token, from the system message.
fn marker_token(body: &Value) -> String {
    let text = body.to_string();
    let at = text
        .find("<untrusted-content-")
        .expect("a marker in the request");
    text[at + "<untrusted-content-".len()..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn in_an_untrusted_run_each_image_sits_inside_the_untrusted_marker() {
    let args = fixture_args("image/png", PNG, 1);
    for api in [
        Api::Anthropic,
        Api::OpenAi("gpt-4o"),
        Api::OpenAi("gpt-4.1-mini"),
        Api::OpenAi("openai/gpt-5"),
        Api::OpenAi("qwen2.5-vl-7b"),
    ] {
        let setup = Setup {
            replies: replies(api, "mcp__fx__image", &args),
            model: "",
            job: "",
            cli: &["--untrusted"],
        };
        let (_, body) = image_run_with(api, fixture_server(), setup, &[]).await;
        let token = marker_token(&body);
        assert_eq!(token.len(), 32, "{api:?}: {token}");
        let open = format!("<untrusted-content-{token} tool=\"mcp__fx__image\" image=\"1\">");
        let close = format!("</untrusted-content-{token}>");
        // The image part and the text parts right around it, in order.
        let parts: Vec<Value> = match api {
            Api::Anthropic => anthropic_result(&body)["content"]
                .as_array()
                .unwrap()
                .clone(),
            Api::OpenAi(_) => openai_result(&body).1["content"]
                .as_array()
                .unwrap()
                .clone(),
        };
        let at = parts
            .iter()
            .position(|p| p["type"] == "image" || p["type"] == "image_url")
            .unwrap_or_else(|| panic!("{api:?}: no image part: {body:.3000}"));
        assert_eq!(parts[at - 1]["text"], open, "{api:?}: {parts:?}");
        assert_eq!(parts[at + 1]["text"], close, "{api:?}: {parts:?}");
        assert_eq!(image_parts(&body), 1, "{api:?}");
        let system = body.to_string();
        assert!(
            system.contains("each image a tool returned"),
            "{api:?}: the system message"
        );
    }
    // Without --untrusted nothing marks the image.
    for api in [Api::Anthropic, Api::OpenAi("gpt-4o")] {
        let (_, body) = image_run(api, fixture_server(), "mcp__fx__image", &args, &[]).await;
        assert_eq!(image_parts(&body), 1);
        assert!(!body.to_string().contains("untrusted-content-"), "{api:?}");
    }
}
