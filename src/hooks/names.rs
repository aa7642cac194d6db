//! Tool names and argument names as Claude Code spells them, so a hook written for it
//! matches cn-run's calls (`Grep` is cn-run's Search) and reads the fields it expects
//! (`tool_input.file_path`, where cn-run's Read says `filepath`).
//!
//! The names come from the tool catalogue's `claude` rows (`crate::catalog`).

use crate::catalog::{self, ClaudeName};

/// Claude Code's names of `tool`, from the tool catalogue (none for MCP tools and the
/// tools Claude Code does not have).
fn claude_rows(tool: &str) -> &'static [ClaudeName] {
    catalog::find(tool).map_or(&[], |t| t.claude)
}

/// Every name a matcher may use for `tool`: cn-run's first, then Claude Code's.
pub fn names_of(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    names.extend(
        claude_rows(tool)
            .iter()
            .map(|c| c.name)
            .filter(|n| *n != tool),
    );
    names
}

/// The name a hook is told (`tool_name`): Claude Code's, where it has one.
pub fn claude_name(tool: &str) -> &str {
    claude_rows(tool).first().map_or(tool, |c| c.name)
}

/// `args` with cn-run's field names turned into Claude Code's (others kept as they are).
pub fn claude_input(tool: &str, args: &serde_json::Value) -> serde_json::Value {
    rename(tool, args, false)
}

/// A hook's `updatedInput` (in Claude Code's names) turned back into cn-run's.
pub fn cn_input(tool: &str, input: &serde_json::Value) -> serde_json::Value {
    rename(tool, input, true)
}

fn rename(tool: &str, args: &serde_json::Value, back: bool) -> serde_json::Value {
    let (Some(a), Some(map)) = (claude_rows(tool).first(), args.as_object()) else {
        return args.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in map {
        let renamed = a.fields.iter().find_map(|(ours, theirs)| {
            let (from, to) = if back { (theirs, ours) } else { (ours, theirs) };
            (*from == k.as_str()).then_some(*to)
        });
        out.insert(renamed.unwrap_or(k).to_owned(), v.clone());
    }
    serde_json::Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_names_and_fields_round_trip() {
        assert_eq!(names_of("Search"), vec!["Search", "Grep"]);
        assert_eq!(names_of("List"), vec!["List", "LS", "Glob"]);
        assert_eq!(claude_name("Fetch"), "WebFetch");
        assert_eq!(claude_name("mcp__gh__issue"), "mcp__gh__issue");
        let ours = json!({"filepath": "a.txt", "content": "x"});
        let theirs = claude_input("Write", &ours);
        assert_eq!(theirs, json!({"file_path": "a.txt", "content": "x"}));
        assert_eq!(cn_input("Write", &theirs), ours);
    }
}
