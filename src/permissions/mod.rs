//! The permission policy engine: decides whether a tool call is allowed, needs permission or is
//! excluded, and says why.
//!
//! It is pure code (no IO, no async) so the agent loop, `cn-run explain` and the tests share one
//! implementation. A [`Policy`] is assembled once from the mode, the command line, the job file, a
//! repo `permissions.yaml` and the mode's default table (first matching rule wins; no match means
//! ask). [`Policy::check`] then layers the dynamic checks on top: the command-safety evaluator for
//! `Bash` and any tightening a tool derives from its own arguments. Tightening always wins over a
//! general rule; `disabled`/exclude wins over everything.

mod compat;
mod compound;
mod context;
mod decide;
mod defaults;
mod error;
mod explain;
mod mcp;
mod paths;
mod pattern;
mod policy;
mod types;
mod yaml;

pub use compat::{matches_arguments, matches_tool_pattern};
pub use context::command_context;
pub use decide::{
    GIT_INTERNALS_RULE, OUTSIDE_WRITE_RULE, PRIVATE_ADDRESS_RULE, UNSEEN_RULE, needs_a_named_rule,
};
pub use defaults::default_table;
pub use explain::suggest_allow_rule;
pub use mcp::McpToolHints;
pub use pattern::{ParsedPattern, argument_key, parse_rule_pattern};
pub use policy::Policy;
pub use types::{
    Decision, Mode, Permission, PolicyError, PolicyInput, RuleSpec, RuleView, Source, Tighten,
};
pub use yaml::parse_permissions_yaml;
