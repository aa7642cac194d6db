//! Replays the recorded streams of real servers (`tests/fixtures/servers/`): a fixture's bytes
//! are sent one SSE event per HTTP chunk, and its `: expect-…` comment lines say what cn-run
//! must make of them. Request bodies can be checked against the published API schemas kept in
//! `tests/fixtures/api_schemas/`.

use serde_json::Value;

use super::http::Reply;
use super::runner::repo_root;

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
