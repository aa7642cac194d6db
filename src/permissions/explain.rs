//! Decisions in words, and the rule that would allow a denied call.
//!
//! Headless runs have nobody to ask, so a denial must tell the model (and the user reading the
//! report) which rule decided and what a job could add to allow the call.

use serde_json::Value;

use super::paths::Workspace;
use super::pattern::{argument_of, argument_value};
use super::types::{Check, Mode, Permission, Rule, Source};

/// Where a rule came from, in words.
pub(crate) fn origin(source: Source, mode: Mode, repo_file: Option<&str>) -> String {
    let mode = mode.as_str();
    match source {
        Source::Mode if mode == "plan" => "plan mode, which is read-only".to_owned(),
        Source::Mode => format!("{mode} mode"),
        Source::Cli => "the command line".to_owned(),
        Source::Job => "the job file".to_owned(),
        Source::RepoFile => match repo_file {
            Some(path) => format!("the permissions file {path}"),
            None => "the repository's permissions file".to_owned(),
        },
        Source::Default => format!("the {mode} mode defaults"),
        Source::Evaluator => "the command-safety check".to_owned(),
        Source::Tool => "the tool's own check".to_owned(),
        Source::NoMatch => "no rule".to_owned(),
        Source::Hook => "a PreToolUse hook".to_owned(),
        Source::Approval => "a reviewer's answer to a deferred call".to_owned(),
    }
}

/// A static rule's verdict in words.
pub(crate) fn by_rule(tool: &str, rule: &Rule, origin: &str) -> String {
    let verb = match rule.permission {
        Permission::Allow => "is allowed by",
        Permission::Ask => "needs permission under",
        Permission::Exclude => "is excluded by",
    };
    let tail = if rule.source == Source::Mode && rule.permission == Permission::Exclude {
        "; no rule can re-allow it"
    } else {
        ""
    };
    format!("`{tool}` {verb} rule `{}` from {origin}{tail}", rule.text)
}

/// A dynamic check's objection in words.
pub(crate) fn objection(check: &Check) -> String {
    let what = match (check.source, check.permission) {
        (Source::Evaluator, Permission::Exclude) => "the command-safety check refuses this command",
        (Source::Evaluator, _) => "the command-safety check cannot show this command is safe",
        (_, Permission::Exclude) => "the tool refuses this call",
        (_, _) => "the tool asks for permission for this call",
    };
    format!("{what} ({}: {})", check.rule, check.reason)
}

/// Why a generally allowed tool still needs permission for this call.
pub(crate) fn tightened(
    tool: &str,
    rule: &Rule,
    origin: &str,
    check: &Check,
    hint: Option<&str>,
) -> String {
    let lift = match hint {
        Some(hint) => {
            format!("only a rule naming this call's argument, such as `{hint}`, can allow it")
        }
        None => "no rule can allow this call outside auto mode".to_owned(),
    };
    format!(
        "{}. Rule `{}` from {origin} allows `{tool}` in general, but {lift}",
        objection(check),
        rule.text
    )
}

/// Why a rule naming part of a compound Bash command does not allow all of it.
pub(crate) fn partly_covered(
    rule: &Rule,
    origin: &str,
    check: &Check,
    part: &super::compound::Uncovered,
    hint: Option<&str>,
) -> String {
    let gap = match (part, hint) {
        (super::compound::Uncovered::Part(p), Some(hint)) => {
            format!("`{p}` is not proven safe and needs a rule of its own, such as `{hint}`")
        }
        (super::compound::Uncovered::Part(p), None) => {
            format!("`{p}` is not proven safe and no rule names it")
        }
        (super::compound::Uncovered::Substitution, _) => {
            "it runs a command substitution (`$(…)`, backticks, `<(…)`), which no rule can name"
                .to_owned()
        }
        (super::compound::Uncovered::Unreadable, _) => {
            "it could not be read as a shell command, so no rule can name its parts".to_owned()
        }
    };
    format!(
        "{}. Rule `{}` from {origin} names only part of this compound command: {gap}",
        objection(check),
        rule.text
    )
}

/// The rule a user would add to allow this call: `Bash(<first word>*)` for a Bash command, the
/// tool's name otherwise (Continue's "remember this" rule).
pub fn suggest_allow_rule(tool: &str, args: &Value) -> String {
    match crate::catalog::command(tool, args).and_then(first_word) {
        Some(word) => format!("{tool}({word}*)"),
        None => tool.to_owned(),
    }
}

/// The first word of a shell command, stopping at whitespace and shell operators.
fn first_word(command: &str) -> Option<&str> {
    let is_break = |c: char| c.is_whitespace() || ";&|<>()".contains(c);
    command
        .trim()
        .split(is_break)
        .next()
        .filter(|word| !word.is_empty())
}

/// A rule naming exactly this call's argument (`Read(.env)`), for tools that have one.
pub(crate) fn argument_hint(tool: &str, args: &Value, ws: &Workspace) -> Option<String> {
    let (_, kind) = argument_of(tool)?;
    let value = argument_value(tool, args)?;
    let argument = if kind.is_path() {
        globset::escape(&ws.normalize(&value))
    } else {
        value
    };
    Some(format!("{tool}({argument})"))
}
