//! The built-in rule tables: each mode's default table (last in evaluation order) and the rules a
//! mode imposes before every other source.
//!
//! The `headless`, `normal`, `plan` and `auto` tables are Continue's, so a job that relies on
//! cn's defaults behaves the same; cn-run's stricter handling of Bash lives in the evaluator step,
//! not in these tables.

use super::types::{Mode, Permission, RuleSpec};

use Permission::{Allow, Ask, Exclude};

/// Tools that change files; plan mode excludes them before any other rule is consulted.
const WRITE_TOOLS: [&str; 3] = ["Edit", "MultiEdit", "Write"];

/// Tools every interactive/headless default table allows, in Continue's order.
const READ_TOOLS: [&str; 13] = [
    "CheckBackgroundJob",
    "AskQuestion",
    "Checklist",
    "Diff",
    "Skills",
    "Exit",
    "Fetch",
    "List",
    "Read",
    "Search",
    "Status",
    "ReportFailure",
    "UploadArtifact",
];

/// Plan mode's allowed tools, in Continue's order.
const PLAN_ALLOWED: [&str; 14] = [
    "Bash",
    "CheckBackgroundJob",
    "AskQuestion",
    "Checklist",
    "Diff",
    "Exit",
    "Fetch",
    "List",
    "Read",
    "ReportFailure",
    "Search",
    "Skills",
    "Status",
    "UploadArtifact",
];

/// Every MCP tool (`mcp__<server>__<tool>`): asked for in the headless and normal tables,
/// excluded in plan mode, unless the server declares the tool read-only (see `mcp.rs`).
pub(crate) const MCP_TOOLS: &str = "mcp__*";

fn rules(tools: &[&str], permission: Permission) -> impl Iterator<Item = RuleSpec> {
    tools
        .iter()
        .map(move |tool| RuleSpec::new(*tool, permission))
}

/// The mode's default table: consulted after every other source.
pub fn default_table(mode: Mode) -> Vec<RuleSpec> {
    match mode {
        Mode::Headless | Mode::Normal => {
            // Continue's interactive table asks for Bash and unknown tools; its headless one
            // allows them (cn-run's evaluator step still asks for unproven commands).
            let rest = if mode == Mode::Normal { Ask } else { Allow };
            rules(&WRITE_TOOLS, Ask)
                .chain(rules(&READ_TOOLS, Allow))
                // MCP: least privilege. Tools a server declares read-only get their own allow
                // rule in front of this one once the servers have listed their tools.
                .chain(rules(&[MCP_TOOLS], Ask))
                .chain(rules(&["Bash", "*"], rest))
                .collect()
        }
        Mode::Plan => rules(&WRITE_TOOLS, Exclude)
            .chain(rules(&PLAN_ALLOWED, Allow))
            .chain(rules(&[MCP_TOOLS], Exclude))
            .chain(rules(&["*"], Allow))
            .collect(),
        Mode::Auto => rules(&["*"], Allow).collect(),
    }
}

/// Rules the mode puts before every other source (nothing can override them).
pub(crate) fn mode_rules(mode: Mode) -> Vec<RuleSpec> {
    match mode {
        Mode::Plan => rules(&WRITE_TOOLS, Exclude).collect(),
        Mode::Headless | Mode::Auto | Mode::Normal => Vec::new(),
    }
}
