//! Skills: load one of the skills the run found. The offered description and schema add
//! the skills' names and summaries to the ones here.

use schemars::JsonSchema;
use serde::Deserialize;

use super::info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo};
use super::schema;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillsArgs {
    /// The name of the skill to load, exactly as listed.
    pub skill_name: String,
}

pub const INFO: ToolInfo = ToolInfo {
    description: "Load a skill: a packaged set of instructions (sometimes with scripts or \
reference files) for a particular kind of task. When the task at hand matches a skill below, load \
it before starting and follow what it says. Only the name and summary of each skill are shown \
here; the call returns its full text and the list of its files.\n\nAvailable skills:",
    rule_arg: Some(RuleArg::named("skill_name", ArgKind::Name)),
    claude: &[ClaudeName {
        name: "Skill",
        fields: &[],
    }],
    offer: Offer::WhenDeclared,
    ..ToolInfo::new(
        "Skills",
        ToolClass::Reads,
        Changes::Nothing,
        schema::of::<SkillsArgs>,
    )
};
