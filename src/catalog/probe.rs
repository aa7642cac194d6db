//! A tool that exists only in the unit tests, to show that a new tool is one file here
//! and one row in `BUILTIN` (plus its body in `tools::probe`): offered, known to job
//! validation, matched by permission rules and checkpointed, with nothing else edited.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ProbeArgs {
    /// The file to stamp.
    pub(crate) target: String,
    /// What to write into it.
    pub(crate) stamp: Option<String>,
}

pub(crate) const INFO: ToolInfo = ToolInfo {
    description: "Write a stamp into one file (a test-only tool).",
    rule_arg: Some(RuleArg::named("target", ArgKind::File)),
    claude: &[ClaudeName {
        name: "Stamp",
        fields: &[("target", "file_path")],
    }],
    ..ToolInfo::new(
        "Probe",
        ToolClass::Writes,
        Changes::NamedFile,
        schema::of::<ProbeArgs>,
    )
};
