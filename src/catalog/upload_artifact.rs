//! UploadArtifact: keep a file of the workspace as an artifact of the run.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UploadArtifactArgs {
    /// Path of the file to save.
    #[serde(rename = "filePath")]
    pub file_path: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Save a file from the workspace as an artifact of this run (a test report, a \
screenshot, a log), so it is kept after the run. Accepted: text, log, json, xml, csv, html, \
markdown, yaml, diff, png, jpg, gif, webp, pdf, zip, tar, tar.gz; at most 50 MB per file and 500 \
MB per run.",
    rule_arg: Some(RuleArg::named("filePath", ArgKind::File)),
    ..ToolInfo::new(
        "UploadArtifact",
        ToolClass::Reports,
        Changes::Nothing,
        schema::of::<UploadArtifactArgs>,
    )
};
