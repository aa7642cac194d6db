//! The built-in rule tables: each mode's default table (last in evaluation order) and the rules a
//! mode imposes before every other source.
//!
//! The `headless`, `normal`, `plan` and `auto` tables are Continue's, so a job that relies on
//! cn's defaults behaves the same; cn-run's stricter handling of Bash lives in the evaluator step,
//! not in these tables.

use super::types::{Mode, Permission, RuleSpec};
use crate::catalog::{self, ToolClass};

use Permission::{Allow, Ask, Exclude};

/// Tools that change files they name (the catalogue's `Writes` class, by name); plan mode
/// excludes them before any other rule is consulted.
fn write_tools() -> Vec<&'static str> {
    let mut names: Vec<&str> = catalog::BUILTIN
        .iter()
        .filter(|t| t.class == ToolClass::Writes)
        .map(|t| t.name)
        .collect();
    names.sort_unstable();
    names
}

/// Tools every interactive/headless default table allows: Continue's list, in Continue's
/// order (the conformance fixture checks both), its names the catalogue's.
const READ_TOOLS: [&str; 13] = [
    catalog::CHECK_BACKGROUND_JOB.name,
    catalog::ASK_QUESTION,
    catalog::CHECKLIST.name,
    catalog::DIFF,
    catalog::SKILLS.name,
    catalog::EXIT.name,
    catalog::FETCH.name,
    catalog::LIST.name,
    catalog::READ.name,
    catalog::SEARCH.name,
    catalog::STATUS,
    catalog::REPORT_FAILURE.name,
    catalog::UPLOAD_ARTIFACT.name,
];

/// Plan mode's allowed tools, in Continue's order.
const PLAN_ALLOWED: [&str; 14] = [
    catalog::BASH.name,
    catalog::CHECK_BACKGROUND_JOB.name,
    catalog::ASK_QUESTION,
    catalog::CHECKLIST.name,
    catalog::DIFF,
    catalog::EXIT.name,
    catalog::FETCH.name,
    catalog::LIST.name,
    catalog::READ.name,
    catalog::REPORT_FAILURE.name,
    catalog::SEARCH.name,
    catalog::SKILLS.name,
    catalog::STATUS,
    catalog::UPLOAD_ARTIFACT.name,
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
            rules(&write_tools(), Ask)
                .chain(rules(&READ_TOOLS, Allow))
                // MCP: least privilege. Tools a server declares read-only get their own allow
                // rule in front of this one once the servers have listed their tools.
                .chain(rules(&[MCP_TOOLS], Ask))
                .chain(rules(&[catalog::BASH.name, "*"], rest))
                .collect()
        }
        Mode::Plan => rules(&write_tools(), Exclude)
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
        Mode::Plan => rules(&write_tools(), Exclude).collect(),
        Mode::Headless | Mode::Auto | Mode::Normal => Vec::new(),
    }
}
