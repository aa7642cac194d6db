//! The hook configuration, in the shape Claude Code's settings use, so a team's
//! `hooks:` block moves between `.claude/settings.json` and a job file unchanged:
//! `{EVENT: [{matcher, hooks: [{type: command, command, timeout}]}]}`.
//!
//! The job file's block is checked strictly (an unknown event or hook type is a located
//! error); a repository's settings file is read leniently (events cn-run does not have are
//! skipped with a warning), because it was written for another tool.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::events::HookOrigin;

/// Seconds a hook may run when its entry names no `timeout` (Claude Code's default).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The events cn-run fires hooks on, by Claude Code's names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum HookEvent {
    /// Before a tool call runs: may allow (an ask only), deny, ask, defer or rewrite it.
    PreToolUse,
    /// After a tool call ran: may add context for the model or block with a reason.
    PostToolUse,
    /// The task is about to go to the model: may add context or refuse it.
    UserPromptSubmit,
    /// The agent answered without calling a tool: may send it back to work with a reason.
    Stop,
    /// A nested agent (the Subagent tool) answered.
    SubagentStop,
    /// The run starts (`startup`) or a resume picks it up (`resume`).
    SessionStart,
    /// The run ends.
    SessionEnd,
    /// The history is about to be compacted.
    PreCompact,
    /// cn-run needs someone's attention: a call needed approval.
    Notification,
}

impl HookEvent {
    /// Claude Code's name of the event (`hook_event_name`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// Whether the event's matcher names a tool (for the others it is ignored or names
    /// the event's source, as Claude Code does).
    pub fn matches_tools(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }

    fn parse(name: &str) -> Option<HookEvent> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
    }
}

/// The `hooks:` block: for each event, its matcher groups in order.
pub type HooksSection = BTreeMap<HookEvent, Vec<MatcherGroup>>;

/// Hooks that run when `matcher` matches (absent, `""` or `*`: always).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatcherGroup {
    /// For tool events, a tool name or a regular expression over tool names, matched
    /// whole against cn-run's name and Claude Code's (`Edit|Write`, `mcp__github__.*`).
    /// For SessionStart the source (`startup`, `resume`), PreCompact the trigger.
    #[serde(default)]
    pub matcher: Option<String>,
    pub hooks: Vec<HookCommand>,
}

/// One hook: a shell command that reads the event as JSON on stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookCommand {
    /// Only `command` exists.
    #[serde(rename = "type")]
    pub kind: HookKind,
    /// Run with `bash -c` in the workspace, contained like Bash calls.
    pub command: String,
    /// Seconds before the hook is killed (default 60).
    #[serde(default)]
    pub timeout: Option<u64>,
}

impl HookCommand {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookKind {
    Command,
}

/// A hook with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDef {
    pub event: HookEvent,
    pub matcher: Option<String>,
    pub command: HookCommand,
    pub origin: HookOrigin,
}

/// The hooks of `section`, flattened in order.
pub fn flatten(section: &HooksSection, origin: HookOrigin) -> Vec<HookDef> {
    section
        .iter()
        .flat_map(|(event, groups)| {
            groups.iter().flat_map(move |g| {
                g.hooks.iter().map(move |h| HookDef {
                    event: *event,
                    matcher: g.matcher.clone(),
                    command: h.clone(),
                    origin,
                })
            })
        })
        .collect()
}

/// Each hook entry that cannot run, as `(field, why)`: a matcher that is not a regular
/// expression, an empty command.
pub fn problems(section: &HooksSection) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, groups) in section {
        for (i, g) in groups.iter().enumerate() {
            let at = format!("hooks.{}[{i}]", event.as_str());
            if let Err(e) = super::matcher::Matcher::new(g.matcher.as_deref()) {
                out.push((format!("{at}.matcher"), e));
            }
            for (j, h) in g.hooks.iter().enumerate() {
                if h.command.trim().is_empty() {
                    out.push((
                        format!("{at}.hooks[{j}].command"),
                        "the command is empty".into(),
                    ));
                }
            }
        }
    }
    out
}

/// Why a repository settings file gave no hooks.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: hooks.{event}: {source}")]
    Shape {
        path: String,
        event: String,
        source: serde_json::Error,
    },
}

/// The hooks of a Claude-style settings file (`{"hooks": {...}, ...}`; other keys are
/// not cn-run's business). Events cn-run does not fire are returned by name, skipped.
pub fn read_settings(path: &Path) -> Result<(HooksSection, Vec<String>), SettingsError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
        path: shown.clone(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| SettingsError::Json {
            path: shown.clone(),
            source,
        })?;
    let mut section = HooksSection::new();
    let mut skipped = Vec::new();
    let Some(hooks) = value.get("hooks").and_then(|h| h.as_object()) else {
        return Ok((section, skipped));
    };
    for (name, groups) in hooks {
        let Some(event) = HookEvent::parse(name) else {
            skipped.push(name.clone());
            continue;
        };
        let groups: Vec<MatcherGroup> =
            serde_json::from_value(groups.clone()).map_err(|source| SettingsError::Shape {
                path: shown.clone(),
                event: name.clone(),
                source,
            })?;
        section.insert(event, groups);
    }
    Ok((section, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_settings_file_reads_its_hooks_and_skips_foreign_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"permissions": {"allow": ["Bash(ls)"]},
                "hooks": {
                  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 5}]}],
                  "PermissionRequest": [{"hooks": [{"type": "command", "command": "y"}]}]
                }}"#,
        )
        .unwrap();
        let (section, skipped) = read_settings(&path).unwrap();
        assert_eq!(skipped, vec!["PermissionRequest".to_owned()]);
        let defs = flatten(&section, HookOrigin::Repository);
        assert_eq!(defs.len(), 1);
        assert_eq!(defs[0].event, HookEvent::PreToolUse);
        assert_eq!(defs[0].matcher.as_deref(), Some("Bash"));
        assert_eq!(defs[0].command.timeout(), Duration::from_secs(5));
    }

    #[test]
    fn an_unknown_hook_type_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]}}"#,
        )
        .unwrap();
        assert!(matches!(
            read_settings(&path),
            Err(SettingsError::Shape { .. })
        ));
    }
}
