//! Edit: replace one piece of text in an existing file.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// Path of the file to change (relative to the workspace, or absolute).
    pub file_path: String,
    /// The text to replace, copied from the file.
    pub old_string: String,
    /// The text to put in its place; must differ from old_string.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one (default false).
    pub replace_all: Option<bool>,
}

/// The rule argument of Edit and MultiEdit (a rule naming either names both).
pub(super) const FILE_PATH: RuleArg = RuleArg {
    name: "file_path",
    kind: ArgKind::File,
    default: None,
};

pub const INFO: ToolInfo = ToolInfo {
    description: "Change part of an existing file: find `old_string` and put `new_string` in its \
place. Read the file first; edits to unread files are refused. `old_string` must match one place \
only (add surrounding lines to make it unique) unless `replace_all` is true. Matching falls back \
to ignoring surrounding whitespace, case, and then all whitespace when the exact text is not \
found; the result says which was used. To create a file, use Write.",
    rule_arg: Some(FILE_PATH),
    twin: Some("MultiEdit"),
    claude: &[ClaudeName {
        name: "Edit",
        fields: &[
            ("file_path", "file_path"),
            ("old_string", "old_string"),
            ("new_string", "new_string"),
            ("replace_all", "replace_all"),
        ],
    }],
    offer: Offer::ByModel,
    ..ToolInfo::new(
        "Edit",
        ToolClass::Writes,
        Changes::NamedFile,
        schema::of::<EditArgs>,
    )
};
