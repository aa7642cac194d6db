//! Fetch: one web page or text file over http(s).

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FetchArgs {
    /// The http:// or https:// URL to fetch.
    pub url: String,
}

pub const INFO: ToolInfo = ToolInfo {
    name: "Fetch",
    description: "Download a web page or text file over http(s) and return its text; HTML pages \
come back as markdown. Long pages are cut (the result says how much). Addresses on the local \
machine or a private network need a permission rule.",
    class: ToolClass::Fetches,
    changes: Changes::Nothing,
    rule_arg: Some(RuleArg {
        name: "url",
        kind: ArgKind::Url,
        default: None,
    }),
    twin: None,
    background: None,
    claude: &[ClaudeName {
        name: "WebFetch",
        fields: &[("url", "url")],
    }],
    offer: Offer::Always,
    schema: schema::of::<FetchArgs>,
};
