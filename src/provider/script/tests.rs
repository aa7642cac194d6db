//! Unit tests for the script format: shapes, validation, splitting and name resolution.

use serde_json::json;

use super::{ScriptClient, pieces, resolve_name};
use crate::conversation::ToolSpec;

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: json!({}),
    }
}

#[test]
fn a_list_a_mapping_with_turns_and_yaml_all_load() {
    let list = ScriptClient::from_str(r#"[{"text": "a"}, {"text": "b"}]"#, "m").unwrap();
    assert_eq!(list.len(), 2);
    let doc = ScriptClient::from_str(r#"{"prompt": "p", "turns": [{"text": "a"}]}"#, "m").unwrap();
    assert_eq!(doc.len(), 1);
    let yaml = "turns:\n  - text: hi\n    tool_calls:\n      - name: Read\n        arguments: {filepath: a}\n  - error: {kind: server, status: 503}\n";
    assert_eq!(ScriptClient::from_str(yaml, "m").unwrap().len(), 2);
}

#[test]
fn mistakes_in_a_script_are_reported_with_their_place() {
    let err = ScriptClient::from_str("turns:\n  - txt: hi\n", "m").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("txt") && text.contains("line 2"), "{text}");
    let err = ScriptClient::from_str("turns:\n  - error: {kind: meltdown}\n", "m").unwrap_err();
    assert!(err.to_string().contains("meltdown"), "{err}");
    let err = ScriptClient::from_str("[{\"tool_calls\": [{\"name\": \"@\"}]}]", "m").unwrap_err();
    assert!(err.to_string().contains("empty name"), "{err}");
    assert!(ScriptClient::from_str("just words", "m").is_err());
}

#[test]
fn pieces_cut_at_character_boundaries_and_rejoin() {
    for text in [
        "",
        "a",
        "ab",
        "héllo wörld",
        "€€€€",
        "{\"filepath\": \"README.md\"}",
    ] {
        let parts = pieces(text);
        assert!(parts.len() <= 3);
        assert_eq!(parts.concat(), text);
    }
    assert_eq!(pieces("abcdef").len(), 3);
}

#[test]
fn at_names_resolve_against_the_offered_tools() {
    let tools = [tool("Read"), tool("Write"), tool("mcp__weather__forecast")];
    assert_eq!(resolve_name("@read", &tools), "Read");
    assert_eq!(resolve_name("@WRITE", &tools), "Write");
    assert_eq!(resolve_name("@weather", &tools), "mcp__weather__forecast");
    assert_eq!(resolve_name("@Nope", &tools), "Nope");
    assert_eq!(resolve_name("read", &tools), "read");
}
