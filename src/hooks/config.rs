//! The hook configuration, in the shape Claude Code's settings use, so a team's
//! `hooks:` block moves between `.claude/settings.json` and a job file unchanged:
//! `{EVENT: [{matcher, hooks: [{type: command, command, timeout}]}]}`.
//!
//! The job file's block is checked strictly (an unknown event or hook type is a located
//! error); a repository's settings files are read leniently ([`super::settings`]), because
//! they were written for another tool.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::events::{HookEvent, HookOrigin};

/// Seconds a hook may run when its entry names no `timeout` (Claude Code's default).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

impl HookEvent {
    /// Whether the event's matcher names a tool (for the others it is ignored or names
    /// the event's source, as Claude Code does).
    pub fn matches_tools(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }

    pub(super) fn parse(name: &str) -> Option<HookEvent> {
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

/// Only `command`: Claude Code's `prompt`, `agent` and `http` hooks ask a model or a
/// server, which nothing in a run bounds, so a job file naming one is an error; a
/// repository's settings file gets it skipped, with a warning.
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
