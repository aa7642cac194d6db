//! Continue-shaped entry points onto the engine's own matchers, so Continue's test cases can be
//! replayed against the code that decides real calls.
//!
//! `matches_tool_pattern` compiles the pattern exactly as a rule would be compiled.
//! `matches_arguments` takes Continue's `{argument: pattern}` maps; each string pattern is matched
//! by the engine's argument matcher (a path glob for path arguments, wildcard text otherwise).

use serde_json::{Map, Value};

use super::paths::Workspace;
use super::pattern::{ArgKind, ArgMatcher, CompiledPattern, PATH_KEYS, value_text};

/// Whether a rule written as `pattern` matches a call of `tool` with `args`, with paths resolved
/// against `workspace`. A malformed pattern matches nothing.
pub fn matches_tool_pattern(
    tool: &str,
    pattern: &str,
    args: &Value,
    workspace: &std::path::Path,
) -> bool {
    let ws = Workspace::new(workspace);
    CompiledPattern::compile(pattern, &ws).is_ok_and(|compiled| compiled.matches(tool, args, &ws))
}

/// Whether every `key: pattern` pair matches `args` (no patterns: true). A string pattern of
/// exactly `*` matches anything, even a missing argument; other strings are argument patterns;
/// non-string patterns must equal the argument.
pub fn matches_arguments(
    args: &Value,
    patterns: Option<&Map<String, Value>>,
    workspace: &std::path::Path,
) -> bool {
    let ws = Workspace::new(workspace);
    patterns.into_iter().flatten().all(|(key, pattern)| {
        let value = args.get(key);
        match pattern {
            Value::String(star) if star == "*" => true,
            Value::String(text) => {
                let kind = if PATH_KEYS.contains(&key.as_str()) {
                    ArgKind::Path
                } else {
                    ArgKind::Name
                };
                let matcher = ArgMatcher::compile(Some(kind), text, &ws);
                let text_value = value.and_then(value_text);
                matcher.is_ok_and(|m| text_value.is_some_and(|v| m.matches(&v, &ws)))
            }
            other => value == Some(other),
        }
    })
}
