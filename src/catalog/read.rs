//! Read: one text file, whole or refused with its size.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// Path of the file to read.
    pub filepath: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Read a text file. `filepath` is relative to the workspace (or absolute). Files \
over the size limit (by default 100,000 characters or 5,000 lines, divided among the parallel \
calls of a turn) are refused with their size, without being loaded; read them in pages with Bash \
(`sed -n '100,200p' FILE`, `head -c 20000 FILE`) or find lines with Search.",
    rule_arg: Some(RuleArg::named("filepath", ArgKind::File)),
    claude: &[ClaudeName {
        name: "Read",
        fields: &[("filepath", "file_path")],
    }],
    ..ToolInfo::new(
        "Read",
        ToolClass::Reads,
        Changes::Nothing,
        schema::of::<ReadArgs>,
    )
};
