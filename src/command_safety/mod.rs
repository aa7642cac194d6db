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
mod brackets;
mod catalog;
mod chars;
mod destructive;
mod devtools;
mod finding;
mod git;
mod interpreters;
mod node_tools;
mod obfuscation;
mod paths;
mod rules;
mod secrets;
mod sed;
mod simple;
mod text_tools;
mod tokenize;
mod walk;
mod words;

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

/// Judges a command on its own (base level: allowed without permission).
pub fn evaluate(command: &str) -> Verdict {
    evaluate_with_base(Level::AllowedWithoutPermission, Some(command))
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
    let mut acc = finding::Acc::new();
    walk::evaluate_text(command, 0, &mut acc);
    let verdict = acc.into_verdict();
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
