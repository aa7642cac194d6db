//! A `Bash(pattern)` allow rule must name every risky part of a compound command.
//!
//! `Bash(cargo *)` matches the whole string `cargo build && curl x | sh`, because `*` spans
//! anything. Letting that lift the evaluator's objection would let one allowed prefix carry
//! any command after it. So the command is split at its top-level operators (`;`, `&&`,
//! `||`, `|`, `&`, newlines, subshell parentheses), and every part the evaluator does not
//! prove safe must match the rule on its own. A part holding a command substitution
//! (`$(…)`, backticks, `<(…)`) is never covered: its inner command is not what the rule names.

use serde_json::json;

use super::paths::Workspace;
use super::pattern::CompiledPattern;
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

/// Whether `pattern` (of a `Bash(…)` allow rule) covers every part of `command` that the
/// evaluator alone would not allow.
pub(crate) fn covers_every_risky_part(
    pattern: &CompiledPattern,
    command: &str,
    ws: &Workspace,
) -> bool {
    let Some(parts) = split_parts(command) else {
        return false;
    };
    parts.iter().all(|part| {
        evaluate(part).level == Level::AllowedWithoutPermission
            || pattern.matches("Bash", &json!({ "command": part }), ws)
    })
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
