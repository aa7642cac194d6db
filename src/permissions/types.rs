//! The engine's vocabulary: permissions, modes, rule sources, rule specs, decisions, compiled
//! rules and the objections of dynamic checks.
//!
//! Kept apart from the logic so callers (job loading, the agent loop, reports) can name these
//! types without pulling in matching code.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::error::PolicyError;
use super::paths::Workspace;
use super::pattern::CompiledPattern;
use crate::command_safety::{Level, Verdict};
pub use crate::events::{Decision, Mode, Permission, RuleView, Source};

/// One rule as written: a pattern (`Read`, `mcp__*`, `Bash(npm install*)`, `Write(src/**)`) and
/// the permission it grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSpec {
    /// The pattern text.
    pub pattern: String,
    /// What a matching call gets.
    pub permission: Permission,
}

impl RuleSpec {
    /// A rule from its pattern text and permission.
    pub fn new(pattern: impl Into<String>, permission: Permission) -> Self {
        Self {
            pattern: pattern.into(),
            permission,
        }
    }
}

/// Everything the policy is assembled from, besides the workspace root.
#[derive(Debug, Clone, Default)]
pub struct PolicyInput {
    /// The run's mode.
    pub mode: Mode,
    /// Rules from the command line.
    pub cli: Vec<RuleSpec>,
    /// Rules from the job file.
    pub job: Vec<RuleSpec>,
    /// Rules from the repository's `permissions.yaml`.
    pub repo: Vec<RuleSpec>,
    /// Path of that file, for explanations.
    pub repo_file: Option<String>,
}

/// A tool's own verdict on a call, derived from its arguments (e.g. reading `.env` → ask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tighten {
    /// `Ask` or `Exclude` (`Allow` tightens nothing and is ignored).
    pub permission: Permission,
    /// A short name for the check, e.g. `sensitive-file`.
    pub rule: &'static str,
    /// Why, in words.
    pub reason: String,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) text: String,
    pub(crate) permission: Permission,
    pub(crate) source: Source,
    pub(crate) pattern: CompiledPattern,
}

impl Rule {
    /// A rule the policy adds itself (for a tool it learns of after assembly: MCP tools).
    pub(crate) fn added(
        text: &str,
        permission: Permission,
        source: Source,
        ws: &Workspace,
    ) -> Result<Rule, PolicyError> {
        Ok(Rule {
            text: text.to_owned(),
            permission,
            source,
            pattern: CompiledPattern::compile(text, ws)?,
        })
    }

    pub(crate) fn names_tool(&self, tool: &str) -> bool {
        self.pattern.names_tool(tool)
    }

    pub(crate) fn has_argument(&self) -> bool {
        self.pattern.has_argument()
    }

    /// A user's allow rule that names the call's argument (`Bash(cargo *)`, `Read(.env)`): the
    /// only kind of rule that can lift an evaluator's or a tool's request for permission.
    pub(crate) fn explicitly_allows_argument(&self) -> bool {
        self.permission == Permission::Allow
            && matches!(self.source, Source::Cli | Source::Job | Source::RepoFile)
            && self.pattern.has_argument()
    }

    pub(crate) fn matches(&self, tool: &str, args: &Value, ws: &Workspace) -> bool {
        self.pattern.matches(tool, args, ws)
    }
}

/// A dynamic check's objection to a call (from the evaluator or the tool itself).
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub(crate) permission: Permission,
    pub(crate) rule: String,
    pub(crate) reason: String,
    pub(crate) source: Source,
}

impl Check {
    /// The evaluator's verdict; a command it proves safe raises no objection.
    pub(crate) fn from_verdict(verdict: Verdict) -> Option<Check> {
        let permission = match verdict.level {
            Level::AllowedWithoutPermission => return None,
            Level::AllowedWithPermission => Permission::Ask,
            Level::Disabled => Permission::Exclude,
        };
        let (rule, reason) = (verdict.rule.to_owned(), verdict.reason);
        Some(Check {
            permission,
            rule,
            reason,
            source: Source::Evaluator,
        })
    }

    /// A tool's tightening; `Allow` tightens nothing.
    pub(crate) fn from_tighten(tighten: Tighten) -> Option<Check> {
        (tighten.permission != Permission::Allow).then(|| Check {
            permission: tighten.permission,
            rule: tighten.rule.to_owned(),
            reason: tighten.reason,
            source: Source::Tool,
        })
    }
}
