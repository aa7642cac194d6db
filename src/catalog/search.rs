//! Search: a regular expression over the workspace's files.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// The regular expression to look for.
    pub pattern: String,
    /// File or directory to search (default: the workspace).
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.py`.
    pub file_pattern: Option<String>,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Search file contents for a regular expression (Rust regex syntax, \
case-sensitive) under `path` (default: the workspace), skipping files ignored by .gitignore, \
hidden files and binary files. `file_pattern` limits the search to files matching a glob such as \
`*.rs` or `src/**/*.ts`. Returns `path:line:text` lines, at most 100.",
    rule_arg: Some(RuleArg {
        name: "path",
        kind: ArgKind::Path,
        default: Some("."),
    }),
    claude: &[ClaudeName {
        name: "Grep",
        fields: &[
            ("pattern", "pattern"),
            ("path", "path"),
            ("file_pattern", "glob"),
        ],
    }],
    ..ToolInfo::new(
        "Search",
        ToolClass::Reads,
        Changes::Nothing,
        schema::of::<SearchArgs>,
    )
};
