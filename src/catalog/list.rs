//! List: the entries of one directory.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Path of the directory to list.
    pub dirpath: String,
}

pub const INFO: ToolInfo = ToolInfo {
    name: "List",
    description: "List the entries of a directory (not recursive), with sizes.",
    class: ToolClass::Reads,
    changes: Changes::Nothing,
    rule_arg: Some(RuleArg {
        name: "dirpath",
        kind: ArgKind::Dir,
        default: None,
    }),
    twin: None,
    background: None,
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
    offer: Offer::Always,
    schema: schema::of::<ListArgs>,
};
