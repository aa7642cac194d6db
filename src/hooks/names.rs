//! Tool names and argument names as Claude Code spells them, so a hook written for it
//! matches cn-run's calls (`Grep` is cn-run's Search) and reads the fields it expects
//! (`tool_input.file_path`, where cn-run's Read says `filepath`).
//!
//! The rows mirror the tool catalogue's `claude` rows: `(ours, Claude's)` field pairs.

/// One tool's other names, and its fields by those names.
struct Alias {
    tool: &'static str,
    names: &'static [&'static str],
    fields: &'static [(&'static str, &'static str)],
}

const ALIASES: &[Alias] = &[
    Alias {
        tool: "Read",
        names: &["Read"],
        fields: &[("filepath", "file_path")],
    },
    Alias {
        tool: "Write",
        names: &["Write"],
        fields: &[("filepath", "file_path")],
    },
    Alias {
        tool: "List",
        names: &["LS", "Glob"],
        fields: &[("dirpath", "path")],
    },
    Alias {
        tool: "Search",
        names: &["Grep"],
        fields: &[("file_pattern", "glob")],
    },
    Alias {
        tool: "Fetch",
        names: &["WebFetch"],
        fields: &[],
    },
    Alias {
        tool: "Checklist",
        names: &["TodoWrite"],
        fields: &[],
    },
    Alias {
        tool: "CheckBackgroundJob",
        names: &["BashOutput"],
        fields: &[("job_id", "bash_id")],
    },
    Alias {
        tool: "Subagent",
        names: &["Task"],
        fields: &[("subagent_name", "subagent_type")],
    },
    Alias {
        tool: "Skills",
        names: &["Skill"],
        fields: &[],
    },
];

fn alias(tool: &str) -> Option<&'static Alias> {
    ALIASES.iter().find(|a| a.tool == tool)
}

/// Every name a matcher may use for `tool`: cn-run's first, then Claude Code's.
pub fn names_of(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    if let Some(a) = alias(tool) {
        names.extend(a.names.iter().copied().filter(|n| *n != tool));
    }
    names
}

/// The name a hook is told (`tool_name`): Claude Code's, where it has one.
pub fn claude_name(tool: &str) -> &str {
    alias(tool)
        .and_then(|a| a.names.first().copied())
        .unwrap_or(tool)
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
    let (Some(a), Some(map)) = (alias(tool), args.as_object()) else {
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
