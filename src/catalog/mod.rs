//! The tool catalogue: every built-in tool described once — its name and the names other
//! agents use for it, its argument struct (which generates the schema the model is
//! offered), the argument a permission rule matches, its class, and whether it changes
//! files. A leaf: plain data, no IO, nothing from a higher module.
//!
//! Everything that needs to know about a tool reads its row here: the registry offers
//! [`ToolInfo::spec`], job validation knows [`names`], the permission engine matches
//! [`ToolInfo::rule_arg`], plan mode excludes [`ToolClass::Writes`], checkpoints and
//! conditional rules read [`ToolInfo::changed_file`] and [`ToolInfo::touched_file`].
//!
//! Adding a tool: a file here (its argument struct and its [`ToolInfo`]) and a row in
//! [`BUILTIN`]; its body in `tools/` and a row in `tools::builtin_tools`.

pub mod bash;
pub mod check_background_job;
pub mod checklist;
pub mod edit;
pub mod exit;
pub mod fetch;
mod info;
pub mod list;
pub mod multi_edit;
#[cfg(test)]
pub(crate) mod probe;
pub mod read;
pub mod report_failure;
pub mod schema;
pub mod search;
pub mod skills;
pub mod subagent;
pub mod upload_artifact;
pub mod write;

pub use info::{ArgKind, Changes, ClaudeName, Offer, RuleArg, ToolClass, ToolInfo, value_text};

/// The rows other modules name directly (the body of each tool names its own).
pub use bash::INFO as BASH;
pub use check_background_job::INFO as CHECK_BACKGROUND_JOB;
pub use checklist::INFO as CHECKLIST;
pub use edit::INFO as EDIT;
pub use exit::INFO as EXIT;
pub use fetch::INFO as FETCH;
pub use list::INFO as LIST;
pub use multi_edit::INFO as MULTI_EDIT;
pub use read::INFO as READ;
pub use report_failure::INFO as REPORT_FAILURE;
pub use search::INFO as SEARCH;
pub use skills::INFO as SKILLS;
pub use subagent::INFO as SUBAGENT;
pub use upload_artifact::INFO as UPLOAD_ARTIFACT;
pub use write::INFO as WRITE;

/// Every built-in tool, in the order a run offers them (as `cn` orders them).
pub static BUILTIN: &[&ToolInfo] = &[
    &READ,
    &WRITE,
    &LIST,
    &BASH,
    &FETCH,
    &CHECKLIST,
    &CHECK_BACKGROUND_JOB,
    &SEARCH,
    &REPORT_FAILURE,
    &UPLOAD_ARTIFACT,
    &EDIT,
    &MULTI_EDIT,
    &EXIT,
    &SUBAGENT,
    &SKILLS,
    #[cfg(test)]
    &probe::INFO,
];

/// Names Continue's default rule tables use for tools cn-run does not have (nobody can
/// answer AskQuestion in a headless run): a rule written for `cn` naming them stays valid.
pub const ASK_QUESTION: &str = "AskQuestion";
pub const DIFF: &str = "Diff";
pub const STATUS: &str = "Status";
pub const CONTINUE_ONLY: &[&str] = &[ASK_QUESTION, DIFF, STATUS];

/// The built-in tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolInfo> {
    BUILTIN.iter().copied().find(|t| t.name == name)
}

/// Every tool name a rule may name exactly: the built-in tools and Continue's others.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN
        .iter()
        .map(|t| t.name)
        .chain(CONTINUE_ONLY.iter().copied())
}

/// The shell command of a call (for a tool whose rule argument is a command: Bash).
pub fn command<'a>(tool: &str, args: &'a serde_json::Value) -> Option<&'a str> {
    find(tool)?.command(args)
}

/// The arguments of a call of `tool` that runs `command` alone (one part of a compound
/// command, tested against the rules on its own).
pub fn command_args(tool: &str, command: &str) -> serde_json::Value {
    let arg = find(tool)
        .and_then(|t| t.rule_arg)
        .filter(|a| a.kind == ArgKind::Command)
        .or(BASH.rule_arg);
    let mut args = serde_json::Map::new();
    if let Some(arg) = arg {
        args.insert(arg.name.to_owned(), command.into());
    }
    serde_json::Value::Object(args)
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
