//! Permission rules are checked where they are written: each pattern must compile, and the
//! tool it names must exist. A rule for a misspelt tool (`Edti(src/**)`, or `edit` in the
//! wrong case) would otherwise match nothing and silently change what the run may do. The
//! tools a rule may name are the catalogue's (`crate::catalog::names`).

use std::path::Path;
use std::sync::LazyLock;

use super::file::JobFile;
use super::suggest::closest;
use crate::permissions::{Permission, Policy, PolicyInput, RuleSpec, parse_rule_pattern};

/// Every tool name a rule may name exactly: the catalogue's tools, and the names Continue's
/// default rule tables use (so a rule written for `cn` stays valid). Skills and MCP tools'
/// own names are their modules'.
static KNOWN: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut names: Vec<String> = crate::catalog::names().map(str::to_owned).collect();
    names.sort_unstable();
    names
});

fn is_glob(tool: &str) -> bool {
    tool.contains(['*', '?'])
}

/// Why `pattern` names a tool that does not exist, with the likely intended name; `None`
/// for known tools, MCP tools (`mcp__…`), tool-name globs and malformed patterns (those are
/// reported by the pattern check).
pub(crate) fn unknown_tool(pattern: &str) -> Option<String> {
    let tool = parse_rule_pattern(pattern).ok()?.tool;
    if is_glob(&tool) || tool.starts_with("mcp__") || KNOWN.contains(&tool) {
        return None;
    }
    let hint = match closest(&tool, KNOWN.iter().map(String::as_str)) {
        Some(name) => format!("did you mean `{name}`?"),
        None => format!(
            "known tools: {}, and mcp__SERVER__TOOL for MCP tools",
            KNOWN.join(", ")
        ),
    };
    Some(format!(
        "unknown tool `{tool}` in rule `{}`; {hint}",
        pattern.trim()
    ))
}

/// Why `pattern` cannot be used as a rule at all (bad syntax), else why its tool is unknown.
fn pattern_problem(pattern: &str, permission: Permission) -> Option<String> {
    let input = PolicyInput {
        job: vec![RuleSpec::new(pattern.to_owned(), permission)],
        ..PolicyInput::default()
    };
    match Policy::build(input, Path::new("/")) {
        Err(e) => Some(e.to_string()),
        Ok(_) => unknown_tool(pattern),
    }
}

/// Every problem of the job's rule patterns (`permissions.*` and the subagents' `tools`),
/// as (field, message), plus subagent names declared twice.
pub(super) fn problems(raw: &JobFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let p = &raw.permissions;
    let lists = [
        ("allow", &p.allow, Permission::Allow),
        ("ask", &p.ask, Permission::Ask),
        ("exclude", &p.exclude, Permission::Exclude),
    ];
    for (key, list, permission) in lists {
        for (i, pattern) in list.iter().enumerate() {
            if let Some(m) = pattern_problem(pattern, permission) {
                out.push((format!("permissions.{key}[{i}]"), m));
            }
        }
    }
    for (i, s) in raw.subagents.iter().enumerate() {
        if raw.subagents[..i].iter().any(|o| o.name == s.name) {
            let message = format!("`{}` is declared twice", s.name);
            out.push((format!("subagents[{i}].name"), message));
        }
        for (j, pattern) in s.tools.iter().flatten().enumerate() {
            if let Some(m) = pattern_problem(pattern, Permission::Allow) {
                out.push((format!("subagents[{i}].tools[{j}]"), m));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tools_come_from_the_tool_list_and_the_default_tables() {
        for name in [
            "Read",
            "Edit",
            "MultiEdit",
            "Bash",
            "Subagent",
            "Skills",
            "Exit",
        ] {
            assert!(KNOWN.iter().any(|k| k == name), "{name} missing: {KNOWN:?}");
        }
        assert!(!KNOWN.iter().any(|k| is_glob(k)), "{KNOWN:?}");
    }

    #[test]
    fn misspelt_and_miscased_tools_are_named_with_the_fix() {
        assert_eq!(
            unknown_tool("Edti(mathx.py)").as_deref(),
            Some("unknown tool `Edti` in rule `Edti(mathx.py)`; did you mean `Edit`?")
        );
        assert_eq!(
            unknown_tool("edit(mathx.py)").as_deref(),
            Some("unknown tool `edit` in rule `edit(mathx.py)`; did you mean `Edit`?")
        );
        let far = unknown_tool("Teleport").unwrap_or_default();
        assert!(
            far.contains("known tools: ") && far.contains("Read"),
            "{far}"
        );
    }

    #[test]
    fn globs_mcp_tools_and_known_tools_pass() {
        for ok in [
            "Read",
            "Bash(cargo *)",
            "*",
            "Ed?t",
            "mcp__github__*",
            "mcp__x__y(z)",
        ] {
            assert_eq!(unknown_tool(ok), None, "{ok}");
        }
    }
}
