//! Fetch: one web page or text file over http(s).

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FetchArgs {
    /// The http:// or https:// URL to fetch.
    pub url: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Download a web page or text file over http(s) and return its text; HTML pages \
come back as markdown. Long pages are cut (the result says how much). Addresses on the local \
machine or a private network need a permission rule.",
    rule_arg: Some(RuleArg::named("url", ArgKind::Url)),
    claude: &[ClaudeName {
        name: "WebFetch",
        fields: &[("url", "url")],
    }],
    ..ToolInfo::new(
        "Fetch",
        ToolClass::Fetches,
        Changes::Nothing,
        schema::of::<FetchArgs>,
    )
};
