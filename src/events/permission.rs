//! The permission engine's answers as events and reports carry them: what may happen to a
//! call, where the deciding rule came from, the decision itself and the rule table's rows.
//!
//! Owned here (not in `permissions`) so the event schema names no module above it;
//! `permissions` re-exports them and keeps the logic that produces them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What may happen to a tool call. Ordered from most to least permissive, so combining two
/// verdicts with `max` keeps the strictest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
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

/// Where the rule (or check) behind a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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

/// The engine's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

/// The run's permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
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
