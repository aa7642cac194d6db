//! Write: create a file or replace its whole content.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// Path of the file to write.
    pub filepath: String,
    /// The complete new content of the file.
    pub content: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Create a file or replace its whole content. `filepath` is relative to the \
workspace. Parent directories are created. For changes to part of an existing file, use the edit \
tool instead.",
    rule_arg: Some(RuleArg::named("filepath", ArgKind::File)),
    claude: &[ClaudeName {
        name: "Write",
        fields: &[("filepath", "file_path"), ("content", "content")],
    }],
    ..ToolInfo::new(
        "Write",
        ToolClass::Writes,
        Changes::NamedFile,
        schema::of::<WriteArgs>,
    )
};
