//! Command safety: how dangerous is a Bash command? Every command the agent wants to run is
//! classified as safe to run, needing permission, or disabled, with the rule that decided and a
//! reason in words. The command is tokenised like a shell would (pipes, `;`, `&&`, `||`, line
//! breaks, redirections, `$(…)`, backticks, `VAR=x` prefixes, `$VAR`); every part, including
//! substituted commands, is judged and the strictest verdict wins. Critical commands are
//! disabled, high-risk ones need permission, known read-only or workspace-local ones are safe,
//! and anything unknown or that cannot be tokenised needs permission.
//!
//! This follows Continue's `evaluateTerminalCommandSecurity` (its test cases run as a
//! conformance test), plus three corrections: reading secrets or expanding secret-looking
//! variables needs permission, fork bombs are disabled, and the build, test, lint and
//! format-check commands a CI agent must run are safe. Pure: no IO.

mod archives;
mod args;
mod brackets;
mod catalog;
mod chars;
mod cx;
mod destructive;
mod devtools;
mod finding;
mod git;
mod interpreters;
mod loaders;
mod node_tools;
mod obfuscation;
mod paths;
mod program_name;
mod programs;
mod rules;
mod secrets;
mod sed;
mod selfcheck;
mod simple;
mod text_tools;
mod tokenize;
mod walk;
mod words;

pub use finding::Part;
#[doc(hidden)]
pub use selfcheck::{BrokenReading, one_reading_holds};

/// How freely a command may run, ordered from least to most strict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum Level {
    AllowedWithoutPermission,
    AllowedWithPermission,
    Disabled,
}

/// The judgement on one command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    pub level: Level,
    /// Stable id of the deciding rule, e.g. `critical.rm_root`, `safe.read_only`,
    /// `pipe.to_shell`, `unknown`.
    pub rule: &'static str,
    /// Why, in words a user understands.
    pub reason: String,
}

/// What the evaluator knows about where a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Commands run in an enforced sandbox (workspace writable, the rest read-only, no
    /// network). Then a build or test step, which runs code the repository defines, is allowed
    /// without permission; without containment it needs permission, as in Continue.
    pub contained: bool,
    /// The run must leave the tree unchanged (`--readonly`, plan mode) and no sandbox keeps it
    /// so: every command that may write needs permission.
    pub read_only: bool,
}

impl Default for Context {
    fn default() -> Self {
        Self::CONTAINED
    }
}

impl Context {
    /// Contained and free to write: the evaluator's classic view.
    pub const CONTAINED: Context = Context {
        contained: true,
        read_only: false,
    };

    /// In words, for `check-command` and `explain`.
    pub fn describe(self) -> &'static str {
        match (self.contained, self.read_only) {
            (true, false) => {
                "contained: commands run in an enforced sandbox, so build, test and lint steps \
                 run without permission"
            }
            (false, false) => {
                "not contained: no enforced sandbox, so commands that run repository-defined \
                 code (builds, tests, package scripts, make) need permission"
            }
            (true, true) => {
                "contained, read-only: the sandbox keeps the workspace unchanged; build, test \
                 and lint steps run without permission"
            }
            (false, true) => {
                "not contained, read-only: no sandbox keeps the tree unchanged, so every command \
                 that may write, and every one that runs repository-defined code, needs permission"
            }
        }
    }
}

/// Judges a command on its own (base level: allowed without permission), as run contained.
pub fn evaluate(command: &str) -> Verdict {
    evaluate_with_base(Level::AllowedWithoutPermission, Some(command))
}

/// Judges a command in the given context.
pub fn evaluate_in(command: &str, context: Context) -> Verdict {
    let mut acc = finding::Acc::new(context);
    walk::evaluate_text(command, 0, &mut acc);
    acc.into_verdict()
}

/// Judges a command under a policy's base level. The result is never less strict than `base`;
/// a missing or blank command gets `base` itself.
pub fn evaluate_with_base(base: Level, command: Option<&str>) -> Verdict {
    if base == Level::Disabled {
        return base_verdict(base, "the policy disables this tool for every command");
    }
    let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
        return base_verdict(
            base,
            "there is no command to judge; the policy's level applies",
        );
    };
    let verdict = evaluate_in(command, Context::CONTAINED);
    if verdict.level >= base {
        return verdict;
    }
    let reason = format!(
        "the policy asks for permission for this tool; on its own the command would be allowed \
         ({}: {})",
        verdict.rule, verdict.reason
    );
    base_verdict(base, reason)
}

/// One reading of a command: the verdict on the whole and every simple command in it (the
/// parts), each with the verdict on it alone. The rule matcher works from these parts, so a
/// rule is only ever matched against a command the evaluator judged.
#[derive(Debug, Clone)]
pub struct Reading {
    pub verdict: Verdict,
    /// In order of reading; nested ones (inside `$(…)`, `sh -c '…'`) follow the text that runs
    /// them, substitutions first.
    pub parts: Vec<Part>,
    /// The command itself holds a command substitution (`$(…)`, backticks, `<(…)`).
    pub substitution: bool,
    /// The command could not be tokenised; its complete lines are parts as usual, and the rest
    /// is one part.
    pub unreadable: bool,
    /// A `cd` moved below the workspace root, so the parts after it are judged from there
    /// (`cd sub && cat ../x` reads inside the workspace; `cat ../x` alone does not).
    pub moved: bool,
}

/// Reads and judges a command, keeping its parts (see [`Reading`]).
pub fn read(command: &str, context: Context) -> Reading {
    let mut acc = finding::Acc::recording(context);
    walk::evaluate_text(command, 0, &mut acc);
    let (substitution, unreadable, moved) = (acc.substituted, acc.unreadable, acc.moved);
    let (verdict, parts) = acc.into_parts();
    Reading {
        verdict,
        parts,
        substitution,
        unreadable,
        moved,
    }
}

fn base_verdict(level: Level, reason: impl Into<String>) -> Verdict {
    let reason = reason.into();
    Verdict {
        level,
        rule: "policy.base",
        reason,
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
