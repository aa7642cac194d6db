//! Replays the recorded streams of real servers (`tests/fixtures/servers/`): a fixture's bytes
//! are sent one SSE event per HTTP chunk, and its `: expect-…` comment lines say what cn-run
//! must make of them. Request bodies can be checked against the published API schemas kept in
//! `tests/fixtures/api_schemas/`.

use serde_json::Value;

use std::path::{Path, PathBuf};

use super::http::Reply;
use super::runner::{Run, cn_run, repo_root, run, write_files};

/// The key the replayed jobs read from `TEST_KEY`.
pub const REPLAY_KEY: &str = "sk-conformance-KEY-4242";

/// One recorded response and what it must produce.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub name: String,
    pub body: String,
    /// `: expect-text: …`
    pub text: Option<String>,
    /// `: expect-call: ID NAME` (the first one)
    pub call: Option<(String, String)>,
    /// Every `: expect-call:` line, in order.
    pub calls: Vec<(String, String)>,
}

impl Fixture {
    /// The 200 event-stream reply that sends this fixture, one event per chunk.
    pub fn reply(&self) -> Reply {
        let chunks: Vec<String> = self
            .body
            .split_inclusive("\n\n")
            .map(str::to_owned)
            .collect();
        Reply::sse(200, chunks)
    }

    pub fn text(&self) -> &str {
        self.text
            .as_deref()
            .unwrap_or_else(|| panic!("{} has no expect-text", self.name))
    }

    pub fn call_id(&self) -> &str {
        &self
            .call
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no expect-call", self.name))
            .0
    }
}

/// The `model:` section of a job for `server` at `url`.
pub fn model_yaml(server: &str, url: &str) -> String {
    let openai = |name: &str, path: &str| {
        format!("  provider: openai\n  name: {name}\n  api_base: {url}{path}\n")
    };
    match server {
        "llamacpp" => openai("qwen2.5-coder-7b-instruct", "/v1"),
        "vllm" => openai("Qwen/Qwen3-8B", "/v1"),
        "ollama" => openai("llama3.1:8b", "/v1"),
        "lmstudio" => openai("qwen2.5-7b-instruct", "/v1"),
        "openrouter" => openai("anthropic/claude-sonnet-4.5", "/api/v1"),
        "deepseek" => openai("deepseek-chat", ""),
        "dashscope" => openai("qwen-plus", "/compatible-mode/v1"),
        "groq" => openai("llama-3.3-70b-versatile", "/openai/v1"),
        "mistral" => openai("mistral-small-latest", "/v1"),
        "gemini" => openai("gemini-3-pro-preview", "/v1beta/openai"),
        "openai" => openai("gpt-5", "/v1") + "  max_tokens: 4000\n  temperature: 0.2\n",
        "azure" => format!(
            "  provider: azure\n  name: gpt-4o\n  api_base: {url}\n  deployment: gpt4o-prod\n"
        ),
        "anthropic" => format!(
            "  provider: anthropic\n  name: claude-sonnet-4-5\n  api_base: {url}\n  thinking: {{budget_tokens: 2048}}\n"
        ),
        "github_models" => openai("openai/gpt-4.1", "/inference"),
        "litellm" => openai("claude-sonnet-4-5", "/v1"),
        "proxy" => openai("gpt-4o", "/v1"),
        other => panic!("no settings for {other}"),
    }
}

/// Writes a job for `server` at `url` in `dir` (the model section of [`model_yaml`], then
/// `model_extra` lines under `model:`), with a `notes.txt` to read.
pub fn write_replayed_job(
    dir: &Path,
    server: &str,
    url: &str,
    prompt: &str,
    model_extra: &str,
) -> PathBuf {
    let job = format!(
        "version: 1\nname: replay-{server}\nmodel:\n{}  api_key_env: TEST_KEY\n{model_extra}prompt: {prompt}\n",
        model_yaml(server, url)
    );
    write_files(dir, &[("job.yaml", &job), ("notes.txt", "hello notes\n")]);
    dir.join("job.yaml")
}

/// Runs [`write_replayed_job`]'s job with the binary (`--out out`); the run and its folder.
pub async fn run_replayed(
    server: &str,
    url: &str,
    prompt: &str,
    model_extra: &str,
) -> (Run, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let job = write_replayed_job(tmp.path(), server, url, prompt, model_extra);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg(&job)
            .arg("-C")
            .arg(&dir)
            .env("TEST_KEY", REPLAY_KEY);
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    (r, tmp)
}

/// `tests/fixtures/servers/{server}/{file}`.
pub fn fixture(server: &str, file: &str) -> Fixture {
    let path = repo_root()
        .join("tests/fixtures/servers")
        .join(server)
        .join(file);
    let body = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let comment = |key: &str| {
        body.lines()
            .find_map(|l| l.strip_prefix(&format!(": {key}: ")))
            .map(str::to_owned)
    };
    assert!(
        comment("source").is_some() || file.ends_with(".json"),
        "{}: a fixture names its source",
        path.display()
    );
    let calls: Vec<(String, String)> = body
        .lines()
        .filter_map(|l| l.strip_prefix(": expect-call: "))
        .map(|c| {
            let (id, name) = c.split_once(' ').unwrap_or((c, ""));
            (id.to_owned(), name.to_owned())
        })
        .collect();
    Fixture {
        name: format!("{server}/{file}"),
        text: comment("expect-text"),
        call: calls.first().cloned(),
        calls,
        body,
    }
}

/// The published schema `name` (`openai_chat_request` or `anthropic_messages_request`).
pub fn api_schema(name: &str) -> Value {
    let path = repo_root()
        .join("tests/fixtures/api_schemas")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Every way `body` breaks `schema`, as readable lines (empty when it validates).
pub fn schema_errors(schema: &Value, body: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).unwrap();
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// A recorded whole response (`*.http`): `: source:` and `: expect-…:` comment lines, then
/// the status line, the headers and a blank line, then the body bytes exactly as the server
/// sends them.
#[derive(Debug, Clone)]
pub struct HttpFixture {
    pub name: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `: expect-kind: …` the error kind cn-run must make of it.
    pub kind: Option<String>,
    /// `: expect-words: …` (each) words the error must carry.
    pub words: Vec<String>,
    /// `: expect-wait: SECONDS` the wait the server asks for.
    pub wait: Option<f64>,
}

impl HttpFixture {
    /// The reply that sends this response (with a `content-length`).
    pub fn reply(&self) -> Reply {
        let content_type = self
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map_or("application/octet-stream", |(_, v)| v.as_str());
        let mut reply = Reply::text(self.status, content_type, self.body.clone());
        for (name, value) in &self.headers {
            reply = reply.with_header(name, value);
        }
        reply
    }
}

/// `tests/fixtures/servers/{server}/{file}` as a whole response.
pub fn http_fixture(server: &str, file: &str) -> HttpFixture {
    let path = repo_root()
        .join("tests/fixtures/servers")
        .join(server)
        .join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rest: &[u8] = &bytes;
    let mut comments = Vec::new();
    while rest.starts_with(b": ") {
        let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
        comments.push(String::from_utf8_lossy(&rest[2..end]).into_owned());
        rest = &rest[(end + 1).min(rest.len())..];
    }
    assert!(
        comments.iter().any(|c| c.starts_with("source: ")),
        "{}: a fixture names its source",
        path.display()
    );
    let head_end = rest
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or_else(|| panic!("{}: no blank line after the headers", path.display()));
    let head = String::from_utf8_lossy(&rest[..head_end]).into_owned();
    let body = rest[head_end + 2..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}: no status line", path.display()));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let expect = |key: &str| -> Vec<String> {
        comments
            .iter()
            .filter_map(|c| c.strip_prefix(&format!("expect-{key}: ")))
            .map(str::to_owned)
            .collect()
    };
    HttpFixture {
        name: format!("{server}/{file}"),
        status,
        headers,
        body,
        kind: expect("kind").into_iter().next(),
        words: expect("words"),
        wait: expect("wait").first().and_then(|w| w.parse().ok()),
    }
}

/// Every `*.http` fixture, as (server, file), sorted.
pub fn http_fixtures() -> Vec<(String, String)> {
    let root = repo_root().join("tests/fixtures/servers");
    let mut out = Vec::new();
    for server in std::fs::read_dir(&root).unwrap().filter_map(Result::ok) {
        if !server.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(server.path())
            .unwrap()
            .filter_map(Result::ok)
        {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.ends_with(".http") {
                out.push((server.file_name().to_string_lossy().into_owned(), name));
            }
        }
    }
    out.sort();
    out
}
