//! Images from MCP tools count in the context estimate by their pixels, so a run whose tool
//! returns large images compacts before a request would overflow the window, for both
//! providers and all four image types; the same run with 1×1 images (same bytes, a few
//! pixels) never compacts. The images are tiny files whose headers declare their size, so
//! only a count that reads the pixels (not the bytes, not the caption) can tell them apart.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::{anthropic as a, openai as o};

const WINDOW: u64 = 16_384;
/// Tool calls the model makes, each returning one image.
const CALLS: usize = 14;

#[derive(Clone, Copy, Debug)]
enum Api {
    OpenAi,
    Anthropic,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

/// The first bytes of an image of `kind` that declare `w`×`h` pixels, as base64.
fn header(kind: Kind, w: u32, h: u32) -> (String, &'static str) {
    let mut b = Vec::new();
    let mime = match kind {
        Kind::Png => {
            b.extend_from_slice(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR");
            b.extend_from_slice(&w.to_be_bytes());
            b.extend_from_slice(&h.to_be_bytes());
            b.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
            "image/png"
        }
        Kind::Jpeg => {
            b.extend_from_slice(
                b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
            );
            b.extend_from_slice(b"\xff\xc0\x00\x11\x08");
            b.extend_from_slice(&(h as u16).to_be_bytes());
            b.extend_from_slice(&(w as u16).to_be_bytes());
            b.extend_from_slice(b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01\xff\xd9");
            "image/jpeg"
        }
        Kind::Gif => {
            b.extend_from_slice(b"GIF89a");
            b.extend_from_slice(&(w as u16).to_le_bytes());
            b.extend_from_slice(&(h as u16).to_le_bytes());
            b.extend_from_slice(&[0, 0, 0, 0x3b]);
            "image/gif"
        }
        Kind::Webp => {
            b.extend_from_slice(b"RIFF\x1e\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00");
            b.extend_from_slice(&(w - 1).to_le_bytes()[..3]);
            b.extend_from_slice(&(h - 1).to_le_bytes()[..3]);
            b.extend_from_slice(&[0, 0]);
            "image/webp"
        }
    };
    b.resize(64, 0);
    (base64::engine::general_purpose::STANDARD.encode(b), mime)
}

fn fixture() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    bin.parent().unwrap().join("examples/mcp_fixture")
}

fn is_compaction(body: &Value) -> bool {
    let last = body["messages"].as_array().and_then(|m| m.last());
    last.is_some_and(|m| {
        m["role"] == "user"
            && m["content"]
                .to_string()
                .contains(&cn_run::context::compaction::COMPACTION_PROMPT[..40])
    })
}

/// The images a request carries (OpenAI `image_url` parts, Anthropic `image` blocks).
fn images_in(body: &Value) -> usize {
    let text = body["messages"].to_string();
    text.matches("\"type\":\"image_url\"").count() + text.matches("\"type\":\"image\"").count()
}

fn reply(api: Api, n: usize, args: &str) -> Reply {
    let id = format!("call_{n}");
    match api {
        Api::OpenAi => {
            let mut call = vec![o::role()];
            call.extend(o::tool_call(0, &id, "mcp__fx__image", &[args]));
            call.extend([o::finish("tool_calls"), o::usage(10, 5, 0), o::done()]);
            Reply::sse(200, call)
        }
        Api::Anthropic => Reply::sse(
            200,
            vec![
                a::message_start(10, 0, 0),
                a::tool_use_start(0, &id, "mcp__fx__image"),
                a::input_json_delta(0, args),
                a::content_block_stop(0),
                a::message_delta("tool_use", 5),
                a::message_stop(),
            ],
        ),
    }
}

fn answer(api: Api, text: &str) -> Reply {
    match api {
        Api::OpenAi => Reply::sse(200, o::answer(text)),
        Api::Anthropic => Reply::sse(200, a::answer(text)),
    }
}

/// What the provider saw: requests for a summary, and the most images any request held.
struct Seen {
    compactions: usize,
    most_images: usize,
}

/// A run whose model calls the fixture's `image` tool [`CALLS`] times with `w`×`h` images.
/// The temporary workspace is returned so the run's folder outlives the call.
async fn image_run(api: Api, kind: Kind, w: u32, h: u32) -> (Run, Seen, tempfile::TempDir) {
    let (data, mime) = header(kind, w, h);
    let args = json!({"mime": mime, "data": data}).to_string();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new((0usize, 0usize)));
    let (c, s) = (Arc::clone(&calls), Arc::clone(&seen));
    let server = MockServer::start_with(move |req: &RecordedRequest| {
        let body = req.json();
        let mut seen = s.lock().unwrap();
        seen.1 = seen.1.max(images_in(&body));
        if is_compaction(&body) {
            seen.0 += 1;
            return answer(
                api,
                "Summary: the task is to look at pictures; keep calling image.",
            );
        }
        let n = c.fetch_add(1, Ordering::SeqCst);
        if n < CALLS {
            reply(api, n, &args)
        } else {
            answer(api, "looked at them all")
        }
    })
    .await;
    let model = match api {
        Api::OpenAi => format!(
            "{{provider: openai, name: gpt-4o, api_base: {}/v1, api_key_env: TEST_OPENAI_KEY, context_length: {WINDOW}, max_tokens: 1024}}",
            server.url()
        ),
        Api::Anthropic => format!(
            "{{provider: anthropic, name: claude-sonnet-4-5, api_base: {}, context_length: {WINDOW}, max_tokens: 1024}}",
            server.url()
        ),
    };
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {model}\nprompt: look at the pictures\nlimits: {{max_turns: 60}}\n\
         mcp_servers:\n  fx:\n    command: {}\n",
        fixture().display()
    );
    write_files(tmp.path(), &[("job.yaml", &job)]);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .env("TEST_OPENAI_KEY", "sk-test-KEY-0123456789")
            .env("ANTHROPIC_API_KEY", "sk-ant-test-000000");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    let (compactions, most_images) = *seen.lock().unwrap();
    drop(server);
    (
        r,
        Seen {
            compactions,
            most_images,
        },
        tmp,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn large_images_compact_the_run_before_the_window_fills_for_both_providers() {
    let kinds = [Kind::Png, Kind::Jpeg, Kind::Gif, Kind::Webp];
    for (api, kind) in [Api::OpenAi, Api::Anthropic]
        .into_iter()
        .flat_map(|a| kinds.map(|k| (a, k)))
    {
        let (r, seen, _tmp) = image_run(api, kind, 2000, 1500).await;
        let case = format!("{api:?} {kind:?}");
        assert_eq!(r.code, 0, "{case}: {r:#?}");
        assert!(
            r.stdout.contains("looked at them all"),
            "{case}: {}",
            r.stdout
        );
        // 14 images of ~1,600 tokens each are 22k tokens: over the 16k window unless counted.
        assert!(seen.compactions >= 1, "{case}: no compaction");
        assert!(
            seen.most_images <= 9,
            "{case}: a request held {} images",
            seen.most_images
        );
        assert_eq!(r.events_of("compaction").len(), seen.compactions, "{case}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_run_with_tiny_images_does_not_compact() {
    for (api, kind) in [
        (Api::OpenAi, Kind::Png),
        (Api::Anthropic, Kind::Jpeg),
        (Api::Anthropic, Kind::Webp),
    ] {
        let (r, seen, _tmp) = image_run(api, kind, 1, 1).await;
        let case = format!("{api:?} {kind:?}");
        assert_eq!(r.code, 0, "{case}: {r:#?}");
        assert_eq!(seen.compactions, 0, "{case}");
        assert_eq!(
            seen.most_images, CALLS,
            "{case}: every image stays in the history"
        );
    }
}
