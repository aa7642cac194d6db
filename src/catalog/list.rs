//! List: the entries of one directory.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Path of the directory to list.
    pub dirpath: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "List the entries of a directory (not recursive), with sizes.",
    rule_arg: Some(RuleArg::named("dirpath", ArgKind::Dir)),
    claude: &[
        ClaudeName {
            name: "LS",
            fields: &[("dirpath", "path")],
        },
        ClaudeName {
            name: "Glob",
            fields: &[("dirpath", "path")],
        },
    ],
    ..ToolInfo::new(
        "List",
        ToolClass::Reads,
        Changes::Nothing,
        schema::of::<ListArgs>,
    )
};
