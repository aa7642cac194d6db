//! MultiEdit: several replacements in one file, all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{Changes, ClaudeName, Offer, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditArgs {
    /// Path of the file to change (relative to the workspace, or absolute).
    pub file_path: String,
    /// The edits, applied one after another.
    pub edits: Vec<OneEdit>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OneEdit {
    /// The text to replace, copied from the file.
    pub old_string: String,
    /// The text to put in its place; must differ from old_string.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one (default false).
    pub replace_all: Option<bool>,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Make several changes to one existing file in a single call. Each edit finds \
`old_string` and puts `new_string` in its place; edits run in order, each on the result of the \
previous one, and if any edit fails nothing is written. Read the file first. Each `old_string` \
must match one place unless its `replace_all` is true; matching falls back to ignoring \
surrounding whitespace, case, and then all whitespace, and the result says which was used. Only \
the first edit may have an empty `old_string` (it inserts at the top).",
    rule_arg: Some(super::edit::FILE_PATH),
    twin: Some("Edit"),
    claude: &[ClaudeName {
        name: "MultiEdit",
        fields: &[("file_path", "file_path"), ("edits", "edits")],
    }],
    offer: Offer::ByModel,
    ..ToolInfo::new(
        "MultiEdit",
        ToolClass::Writes,
        Changes::NamedFile,
        schema::of::<MultiEditArgs>,
    )
};
