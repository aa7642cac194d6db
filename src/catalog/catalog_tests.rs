use serde_json::json;

use super::*;

/// The schemas the model is offered, byte for byte as before the catalogue (prompt
/// caches and token counts depend on them): optional fields, nested lists, no fields.
#[test]
fn argument_structs_give_the_schemas_the_tools_always_offered() {
    let text = |info: &ToolInfo| serde_json::to_string(&(info.schema)()).unwrap();
    assert_eq!(
        text(&BASH),
        r#"{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"The command to run."},"timeout":{"type":"number","description":"Seconds without output before the command is stopped (default 180, max 600)."},"run_in_background":{"type":"boolean","description":"Start the command and return at once with a job id instead of waiting for it."}}}"#
    );
    assert_eq!(
        text(&MULTI_EDIT),
        r#"{"type":"object","required":["file_path","edits"],"properties":{"file_path":{"type":"string","description":"Path of the file to change (relative to the workspace, or absolute)."},"edits":{"type":"array","description":"The edits, applied one after another.","items":{"type":"object","required":["old_string","new_string"],"properties":{"old_string":{"type":"string","description":"The text to replace, copied from the file."},"new_string":{"type":"string","description":"The text to put in its place; must differ from old_string."},"replace_all":{"type":"boolean","description":"Replace every occurrence instead of exactly one (default false)."}}}}}}"#
    );
    assert_eq!(text(&EXIT), r#"{"type":"object","properties":{}}"#);
    assert_eq!(
        text(&UPLOAD_ARTIFACT),
        r#"{"type":"object","required":["filePath"],"properties":{"filePath":{"type":"string","description":"Path of the file to save."}}}"#
    );
}

#[test]
fn every_tool_is_described_whole_and_once() {
    let mut seen = std::collections::HashSet::new();
    for tool in BUILTIN {
        assert!(seen.insert(tool.name), "{} twice", tool.name);
        assert!(!tool.description.is_empty(), "{}", tool.name);
        let schema = (tool.schema)();
        assert_eq!(schema["type"], "object", "{}", tool.name);
        if let Some(arg) = tool.rule_arg {
            assert!(
                schema["properties"].get(arg.name).is_some(),
                "{}: its rule argument {} is not one of its fields",
                tool.name,
                arg.name
            );
        }
        for claude in tool.claude {
            for (ours, _) in claude.fields {
                assert!(
                    schema["properties"].get(*ours).is_some(),
                    "{}: {ours} mapped to Claude but not a field",
                    tool.name
                );
            }
        }
        if let Some(twin) = tool.twin {
            assert_eq!(find(twin).and_then(|t| t.twin), Some(tool.name));
        }
        assert_eq!(tool.changed_file(&json!({})), None);
    }
    for name in CONTINUE_ONLY {
        assert!(find(name).is_none(), "{name} is a tool after all");
    }
}

#[test]
fn rule_arguments_say_what_a_call_is_about() {
    let args = json!({"pattern": "x"});
    assert_eq!(SEARCH.rule_value(&args).as_deref(), Some("."));
    assert_eq!(
        BASH.rule_value(&json!({"command": "ls"})).as_deref(),
        Some("ls")
    );
    assert_eq!(command("Bash", &json!({"command": "ls"})), Some("ls"));
    assert_eq!(command("Read", &json!({"command": "ls"})), None);
    assert_eq!(command_args("Bash", "ls"), json!({"command": "ls"}));
    let edit = json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"});
    assert_eq!(EDIT.changed_file(&edit), Some("a.rs"));
    assert_eq!(EDIT.touched_file(&edit), Some("a.rs"));
    assert_eq!(READ.changed_file(&json!({"filepath": "a"})), None);
    assert_eq!(READ.touched_file(&json!({"filepath": "a"})), Some("a"));
    assert_eq!(
        UPLOAD_ARTIFACT.touched_file(&json!({"filePath": "a"})),
        None
    );
    assert!(BASH.leaves_running(&json!({"command": "x", "run_in_background": true})));
    assert!(!BASH.leaves_running(&json!({"command": "x"})));
    assert!(EDIT.named_by("MultiEdit") && MULTI_EDIT.named_by("Edit"));
    assert!(!WRITE.named_by("Edit"));
}

#[test]
fn claude_code_names_map_to_ours() {
    let claude = |ours: &ToolInfo| ours.claude.iter().map(|c| c.name).collect::<Vec<_>>();
    assert_eq!(claude(&SEARCH), ["Grep"]);
    assert_eq!(claude(&FETCH), ["WebFetch"]);
    assert_eq!(claude(&LIST), ["LS", "Glob"]);
    assert_eq!(claude(&CHECKLIST), ["TodoWrite"]);
    assert_eq!(READ.claude_field("filepath"), Some("file_path"));
    assert_eq!(SEARCH.claude_field("file_pattern"), Some("glob"));
    assert_eq!(BASH.claude_field("command"), Some("command"));
    assert_eq!(FETCH.claude_field("url"), Some("url"));
    assert_eq!(REPORT_FAILURE.claude_field("errorMessage"), None);
}
