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

/// What may happen to a tool call. Ordered from most to least permissive, so combining two
/// verdicts with `max` keeps the strictest.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Run the call.
    Allow,
    /// The call needs someone's permission; headless runs resolve this by their `on_ask` setting.
    Ask,
    /// Never run the call (and hide the tool from the model when no argument could change that).
    Exclude,
}

impl Permission {
    /// The lowercase word used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Exclude => "exclude",
        }
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The run's permission mode.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// CI default: reads and safe commands run, anything else is asked for.
    #[default]
    Headless,
    /// Everything runs except what a rule excludes or the safety checks refuse.
    Auto,
    /// Read-only: Write, Edit and MultiEdit are excluded whatever the rules say.
    Plan,
    /// Continue's interactive defaults (writes and Bash ask), for compatibility.
    Normal,
}

impl Mode {
    /// The lowercase word used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Headless => "headless",
            Self::Auto => "auto",
            Self::Plan => "plan",
            Self::Normal => "normal",
        }
    }
}

/// Where the rule (or check) behind a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Fixed by the mode (plan mode's write exclusions, auto mode's widening of ask).
    Mode,
    /// `--allow` / `--ask` / `--exclude` on the command line.
    Cli,
    /// The job file's `permissions`.
    Job,
    /// A repository `permissions.yaml`.
    RepoFile,
    /// The mode's default table.
    Default,
    /// The Bash command-safety evaluator.
    Evaluator,
    /// The tool's own check of its arguments.
    Tool,
    /// No rule matched.
    NoMatch,
    /// A PreToolUse hook (it may tighten, or answer an ask; never open an exclude).
    Hook,
    /// A person's answer to a deferred call (`--approve` / `--deny`).
    Approval,
}

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

/// The engine's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    /// What happens to the call.
    pub permission: Permission,
    /// The rule pattern (or the name of the check) that decided.
    pub rule: Option<String>,
    /// Where that rule or check came from.
    pub source: Source,
    /// The decision in words, for the model and the user.
    pub reason: String,
    /// For a denial: a rule pattern that would allow this call, if any rule could.
    pub allow_hint: Option<String>,
}

/// One row of the assembled rule table, in evaluation order (for `cn-run explain` and the
/// `run.started` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleView {
    /// The pattern text.
    pub pattern: String,
    /// What a matching call gets.
    pub permission: Permission,
    /// Where the rule came from.
    pub source: Source,
    /// The file it came from, for repo-file rules.
    pub file: Option<String>,
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
