//! Rules and compound commands: every risky part needs an allow rule of its own, and an
//! excluded part excludes the whole command.
//!
//! `Bash(cargo *)` matches the whole string `cargo build && curl x | sh`, because `*` spans
//! anything. Letting that lift the evaluator's objection would let one allowed prefix carry
//! any command after it. So the command is split at its top-level operators (`;`, `&&`,
//! `||`, `|`, `&`, newlines, subshell parentheses), and every part the evaluator does not
//! prove safe must be allowed by the explicit rule that decides it on its own. A part
//! holding a command substitution (`$(…)`, backticks, `<(…)`) is never covered: its inner
//! command is not what a rule names. The other way round, `Bash(git push*)` excluded must
//! also stop `git add . && git push`, whose whole string does not start with `git push`.

use crate::command_safety::{Level, evaluate};

/// The command's top-level parts, quotes respected; `None` when it holds a substitution.
pub(crate) fn split_parts(command: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            cur.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                cur.push(c);
            }
            '\'' if !double => {
                single = !single;
                cur.push(c);
            }
            '"' if !single => {
                double = !double;
                cur.push(c);
            }
            '`' if !single => return None,
            '$' | '<' | '>' if !single && chars.peek() == Some(&'(') => return None,
            ';' | '|' | '&' | '\n' | '(' | ')' if !single && !double => {
                // `>&2`, `2>&1` and `&>` are redirections, not separators.
                if c == '&' && (cur.ends_with('>') || chars.peek() == Some(&'>')) {
                    cur.push(c);
                    continue;
                }
                parts.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    parts.push(cur);
    Some(
        parts
            .into_iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// The first part of `command` that `pattern` (of a `Bash(…)` allow rule) leaves
/// uncovered: one the evaluator alone would not allow and the rule does not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Uncovered {
    /// The command holds a command substitution, which no rule names.
    Substitution,
    /// This part needs a rule of its own.
    Part(String),
}

/// The first part of `command` the evaluator alone would not allow and `covered` (which
/// asks the policy for the rule that decides that part) does not allow either.
pub(crate) fn first_uncovered(command: &str, covered: impl Fn(&str) -> bool) -> Option<Uncovered> {
    let Some(parts) = split_parts(command) else {
        return Some(Uncovered::Substitution);
    };
    parts
        .into_iter()
        .find(|part| evaluate(part).level != Level::AllowedWithoutPermission && !covered(part))
        .map(Uncovered::Part)
}

#[cfg(test)]
mod tests {
    use super::split_parts;

    #[test]
    fn splits_at_operators_outside_quotes() {
        assert_eq!(
            split_parts("cargo build && curl x | sh; echo 'a;b' \"c|d\" 2>&1 &").unwrap(),
            ["cargo build", "curl x", "sh", "echo 'a;b' \"c|d\" 2>&1"]
        );
        assert_eq!(
            split_parts("(cd a && make)\nls").unwrap(),
            ["cd a", "make", "ls"]
        );
    }

    #[test]
    fn substitutions_are_never_covered() {
        for cmd in ["echo $(curl x)", "echo `id`", "diff <(a) b", "cat >(tee x)"] {
            assert!(split_parts(cmd).is_none(), "{cmd}");
        }
        assert!(split_parts("echo '$(not a substitution)'").is_some());
    }
}
