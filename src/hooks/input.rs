//! The JSON a hook reads on stdin, with Claude Code's field names: the common
//! `session_id`, `transcript_path`, `cwd`, `permission_mode` and `hook_event_name`, then
//! the event's own (`tool_name`, `tool_input`, `tool_use_id`, `tool_response`, `prompt`,
//! `stop_hook_active`, `source`, `reason`, `trigger`, `message`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::config::HookEvent;
use super::names;
use crate::permissions::Mode;

/// Characters of a tool's result given to a PostToolUse hook (the rest is cut, said so).
const RESPONSE_CHARS: usize = 48_000;

/// What every event's input says about the run.
#[derive(Debug, Clone)]
pub struct Common {
    pub session_id: String,
    pub transcript_path: PathBuf,
    pub cwd: PathBuf,
    pub mode: Mode,
}

impl Common {
    /// The event's whole input: the common fields and `fields`.
    pub fn input(&self, event: HookEvent, fields: Map<String, Value>) -> String {
        let mut all = Map::new();
        all.insert("session_id".into(), self.session_id.clone().into());
        all.insert(
            "transcript_path".into(),
            self.transcript_path.to_string_lossy().into_owned().into(),
        );
        all.insert("cwd".into(), self.cwd.to_string_lossy().into_owned().into());
        all.insert("permission_mode".into(), permission_mode(self.mode).into());
        all.insert("hook_event_name".into(), event.as_str().into());
        all.extend(fields);
        Value::Object(all).to_string()
    }
}

/// Claude Code's word for the run's mode.
fn permission_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Headless | Mode::Normal => "default",
        Mode::Plan => "plan",
        Mode::Auto => "bypassPermissions",
    }
}

/// `tool_name`, `tool_input` (Claude Code's field names, file paths absolute) and
/// `tool_use_id` of a call.
pub fn tool_fields(tool: &str, args: &Value, call_id: &str, cwd: &Path) -> Map<String, Value> {
    let mut input = names::claude_input(tool, args);
    if let Some(Value::String(p)) = input.get_mut("file_path")
        && Path::new(p.as_str()).is_relative()
    {
        *p = cwd.join(p.as_str()).to_string_lossy().into_owned();
    }
    let mut m = Map::new();
    m.insert("tool_name".into(), names::claude_name(tool).into());
    m.insert("tool_input".into(), input);
    m.insert("tool_use_id".into(), call_id.into());
    m
}

/// A PostToolUse's `tool_response`: the result's text (cut to a bound), whether it
/// failed, and for file tools the path it wrote.
pub fn tool_response(input: &Map<String, Value>, output: &str, is_error: bool) -> Value {
    let mut cut = output.len().min(RESPONSE_CHARS);
    while !output.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut r = json!({
        "output": &output[..cut],
        "is_error": is_error,
        "success": !is_error,
    });
    if cut < output.len() {
        r["truncated"] = true.into();
    }
    if let Some(path) = input.get("tool_input").and_then(|i| i.get("file_path")) {
        r["filePath"] = path.clone();
    }
    r
}

/// One field, for the events that have one or two.
pub fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_input_has_claude_codes_names_and_absolute_paths() {
        let common = Common {
            session_id: "r1".into(),
            transcript_path: "/runs/r1/session.jsonl".into(),
            cwd: "/ws".into(),
            mode: Mode::Headless,
        };
        let f = tool_fields(
            "Write",
            &json!({"filepath": "a/b.txt", "content": "x"}),
            "c1",
            Path::new("/ws"),
        );
        let text = common.input(HookEvent::PreToolUse, f);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hook_event_name"], "PreToolUse");
        assert_eq!(v["permission_mode"], "default");
        assert_eq!(v["session_id"], "r1");
        assert_eq!(v["tool_name"], "Write");
        assert_eq!(v["tool_use_id"], "c1");
        assert_eq!(v["tool_input"]["file_path"], "/ws/a/b.txt");
        assert_eq!(v["tool_input"]["content"], "x");
    }
}
