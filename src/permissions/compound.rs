//! Rules and compound commands: every risky part needs an allow rule of its own, and an
//! excluded part excludes the whole command.
//!
//! `Bash(cargo *)` matches the whole string `cargo build && curl x | sh`, because `*` spans
//! anything. Letting that lift the evaluator's objection would let one allowed prefix carry
//! any command after it. So the rule matcher works from the evaluator's own reading of the
//! command ([`crate::command_safety::read`]): one parse, so the parts a rule is matched against
//! are exactly the simple commands the evaluator judged, quoting of every kind (`$'…'`, here
//! documents, comments, line continuations) read once. Every part the evaluator does not prove
//! safe must be allowed by the explicit rule that decides it on its own. A command holding a
//! command substitution (`$(…)`, backticks, `<(…)`) is never covered, nor one that cannot be
//! read: what runs there is not what a rule names. The other way round, `Bash(git push*)`
//! excluded must also stop `git add . && git push`, `echo $(git push)` and `sh -c 'git push'`:
//! every part, nested ones included, is matched against the exclude rules.

use crate::command_safety::{Level, Reading};

/// The first part of `command` that `pattern` (of a `Bash(…)` allow rule) leaves
/// uncovered: one the evaluator alone would not allow and the rule does not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Uncovered {
    /// The command holds a command substitution, which no rule names.
    Substitution,
    /// The command could not be read, so no rule can name its parts.
    Unreadable,
    /// This part needs a rule of its own.
    Part(String),
}

/// The first part of `reading` the evaluator alone would not allow and `covered` (which
/// asks the policy for the rule that decides that part) does not allow either.
pub(crate) fn first_uncovered(
    reading: &Reading,
    covered: impl Fn(&str) -> bool,
) -> Option<Uncovered> {
    if reading.substitution {
        return Some(Uncovered::Substitution);
    }
    if reading.unreadable {
        return Some(Uncovered::Unreadable);
    }
    reading
        .parts
        .iter()
        .filter(|p| p.depth == 0)
        .find(|p| p.verdict.level != Level::AllowedWithoutPermission && !covered(&p.text))
        .map(|p| Uncovered::Part(p.text.clone()))
}

/// Every part of a command, nested ones included, for matching against exclude rules; `None`
/// when the command is one part that is the whole command (the whole-command match decides).
pub(crate) fn all_parts(reading: &Reading, command: &str) -> Option<Vec<String>> {
    let parts: Vec<String> = reading.parts.iter().map(|p| p.text.clone()).collect();
    match parts.as_slice() {
        [only] if only == command.trim() => None,
        [] => None,
        _ => Some(parts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_safety::{Context, read};

    fn texts(command: &str, depth: u8) -> Vec<String> {
        read(command, Context::CONTAINED)
            .parts
            .into_iter()
            .filter(|p| p.depth == depth)
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn splits_at_operators_outside_quotes() {
        assert_eq!(
            texts("cargo build && curl x | sh; echo 'a;b' \"c|d\" 2>&1 &", 0),
            ["cargo build", "curl x", "sh", "echo 'a;b' \"c|d\" 2>&1"]
        );
        assert_eq!(texts("(cd a && make)\nls", 0), ["cd a", "make", "ls"]);
    }

    #[test]
    fn ansi_c_quotes_and_comments_are_read_as_the_shell_reads_them() {
        assert_eq!(
            texts("npm test $'\\''; id > /tmp/x", 0),
            ["npm test $'\\''", "id > /tmp/x"]
        );
        assert_eq!(
            texts("git status $'\\'' && git push origin main", 0),
            ["git status $'\\''", "git push origin main"]
        );
        assert_eq!(texts("ls # ; rm -rf x\nid", 0), ["ls", "id"]);
    }

    #[test]
    fn substitutions_are_never_covered_but_their_parts_are_seen() {
        for cmd in ["echo $(curl x)", "echo `id`", "diff <(a) b", "cat >(tee x)"] {
            let reading = read(cmd, Context::CONTAINED);
            assert_eq!(
                first_uncovered(&reading, |_| true),
                Some(Uncovered::Substitution),
                "{cmd}"
            );
        }
        assert_eq!(texts("echo $(git push origin)", 1), ["git push origin"]);
        assert!(!read("echo '$(not a substitution)'", Context::CONTAINED).substitution);
    }
}
