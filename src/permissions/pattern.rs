//! Rule patterns: `Tool`, a tool-name glob (`mcp__*`, `*`), or `Tool(argument pattern)`.
//!
//! The argument pattern applies to the one argument each built-in tool is about (its command,
//! path or URL: the catalogue's `rule_arg`), so `Write(src/**)` tests Write's `filepath`. Path patterns are globset globs
//! matched against workspace-normalised paths (`*` stays inside one directory, `**` crosses
//! them); text patterns (commands, URLs, names) use `*` for any run of characters and `?` for one,
//! and a pattern without either must match exactly. Tools with no known argument (MCP tools and
//! the like) never match a `Tool(...)` pattern.

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use super::error::PolicyError;
use super::paths::Workspace;
use crate::catalog;
pub(crate) use crate::catalog::ArgKind;
pub(crate) use crate::catalog::value_text;

/// Argument keys that hold paths in Continue's argument matcher (`compat`): Continue's list.
pub(crate) const PATH_KEYS: &[&str] = &["filepath", "file_path", "dirpath", "path"];

/// The argument a `Tool(...)` pattern tests for `tool`, or `None` if the tool has none.
pub fn argument_key(tool: &str) -> Option<&'static str> {
    argument_of(tool).map(|(key, _)| key)
}

/// The catalogue's rule argument of `tool`: its key and what it holds.
pub(crate) fn argument_of(tool: &str) -> Option<(&'static str, ArgKind)> {
    let arg = catalog::find(tool)?.rule_arg?;
    Some((arg.name, arg.kind))
}

/// The governing argument's value for this call, as text (a missing one is its default,
/// e.g. Search's `path` is `.`).
pub(crate) fn argument_value(tool: &str, args: &Value) -> Option<String> {
    catalog::find(tool)?.rule_value(args)
}

/// A rule pattern split into its tool part and optional argument pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPattern {
    /// The tool name or tool-name glob.
    pub tool: String,
    /// The argument pattern between the parentheses, trimmed; `None` for `Tool` and `Tool()`.
    pub argument: Option<String>,
}

/// Splits `Tool(argument)` (the argument runs to the final `)`, so it may contain parentheses).
pub fn parse_rule_pattern(text: &str) -> Result<ParsedPattern, PolicyError> {
    let text = text.trim();
    let invalid = |reason: &str| PolicyError::InvalidPattern {
        pattern: text.to_owned(),
        reason: reason.to_owned(),
    };
    let Some(open) = text.find('(') else {
        return Ok(ParsedPattern {
            tool: text.to_owned(),
            argument: None,
        });
    };
    let inner = text[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| invalid("an argument pattern must end with `)`"))?;
    let tool = text[..open].trim_end();
    if tool.is_empty() {
        return Err(invalid("the tool name before `(` is missing"));
    }
    let argument = Some(inner.trim())
        .filter(|arg| !arg.is_empty())
        .map(str::to_owned);
    Ok(ParsedPattern {
        tool: tool.to_owned(),
        argument,
    })
}

/// `*` matches any run of characters (including `/`), `?` exactly one; all else is literal.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((star, from)) => {
                    backtrack = Some((star, from + 1));
                    p = star + 1;
                    t = from + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?'])
}

/// How the tool part of a pattern matches tool names (case-sensitive).
#[derive(Debug, Clone)]
enum ToolMatcher {
    Any,
    Exact(String),
    Wildcard(String),
}

impl ToolMatcher {
    fn new(name: &str) -> Self {
        match name {
            "*" => Self::Any,
            glob if has_wildcard(glob) => Self::Wildcard(glob.to_owned()),
            exact => Self::Exact(exact.to_owned()),
        }
    }

    fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Exact(name) => {
                name == tool || catalog::find(tool).is_some_and(|t| t.named_by(name))
            }
            Self::Wildcard(glob) => wildcard_match(glob, tool),
        }
    }
}

/// A compiled argument pattern.
#[derive(Debug, Clone)]
pub(crate) enum ArgMatcher {
    Text(String),
    Path {
        glob: GlobMatcher,
        absolute: bool,
    },
    /// The tool has no governing argument, so the pattern can never match.
    Never,
}

impl ArgMatcher {
    /// Compiles `pattern` for an argument of `kind` (`None`: a tool without a known argument).
    pub(crate) fn compile(
        kind: Option<ArgKind>,
        pattern: &str,
        ws: &Workspace,
    ) -> Result<Self, globset::Error> {
        match kind {
            None => Ok(Self::Never),
            Some(kind) if !kind.is_path() => Ok(Self::Text(pattern.to_owned())),
            Some(_) => {
                let normalized = ws.normalize(pattern);
                let glob = GlobBuilder::new(&normalized)
                    .literal_separator(true)
                    .backslash_escape(false)
                    .build()?;
                let absolute = normalized.starts_with('/');
                Ok(Self::Path {
                    glob: glob.compile_matcher(),
                    absolute,
                })
            }
        }
    }

    /// Whether the argument's text matches (paths are normalised first; a relative pattern
    /// never matches a path outside the workspace, nor an absolute one a path inside).
    pub(crate) fn matches(&self, value: &str, ws: &Workspace) -> bool {
        match self {
            Self::Text(pattern) => wildcard_match(pattern, value),
            Self::Path { glob, absolute } => {
                let path = ws.real(value);
                path.starts_with('/') == *absolute && glob.is_match(&path)
            }
            Self::Never => false,
        }
    }
}

/// A whole rule pattern, ready to test calls against.
#[derive(Debug, Clone)]
pub(crate) struct CompiledPattern {
    tool: ToolMatcher,
    argument: Option<ArgMatcher>,
}

impl CompiledPattern {
    pub(crate) fn compile(text: &str, ws: &Workspace) -> Result<Self, PolicyError> {
        let parsed = parse_rule_pattern(text)?;
        let invalid = |reason: String| PolicyError::InvalidPattern {
            pattern: text.trim().to_owned(),
            reason,
        };
        if parsed.tool.is_empty() {
            return Err(invalid("the pattern is empty".to_owned()));
        }
        let tool = ToolMatcher::new(&parsed.tool);
        let argument = match &parsed.argument {
            None => None,
            Some(_) if !matches!(tool, ToolMatcher::Exact(_)) => {
                return Err(invalid(
                    "an argument pattern needs an exact tool name".to_owned(),
                ));
            }
            Some(arg) => {
                let kind = argument_of(&parsed.tool).map(|(_, kind)| kind);
                let glob = ArgMatcher::compile(kind, arg, ws);
                Some(glob.map_err(|e| invalid(format!("not a valid path glob: {}", e.kind())))?)
            }
        };
        Ok(Self { tool, argument })
    }

    /// Whether the pattern names `tool` (ignoring any argument pattern).
    pub(crate) fn names_tool(&self, tool: &str) -> bool {
        self.tool.matches(tool)
    }

    /// Whether the pattern constrains an argument (not just the tool name).
    pub(crate) fn has_argument(&self) -> bool {
        self.argument.is_some()
    }

    /// Whether a call of `tool` with `args` matches.
    pub(crate) fn matches(&self, tool: &str, args: &Value, ws: &Workspace) -> bool {
        if !self.tool.matches(tool) {
            return false;
        }
        match &self.argument {
            None => true,
            Some(matcher) => argument_value(tool, args).is_some_and(|v| matcher.matches(&v, ws)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cross_slashes_and_other_characters_are_literal() {
        assert!(wildcard_match("npm *", "npm run test/unit"));
        assert!(wildcard_match("git a?d", "git add"));
        assert!(!wildcard_match("git a??d", "git add"));
        assert!(wildcard_match("test[abc].*", "test[abc].txt"));
        assert!(!wildcard_match("ls", "ls -la"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*b*c", "aXbYbZc"));
        assert!(!wildcard_match("a*b*c", "aXbYbZ"));
    }

    #[test]
    fn parse_keeps_parentheses_inside_the_argument() {
        let parsed = parse_rule_pattern("Bash(echo $(date))").expect("parses");
        assert_eq!(parsed.tool, "Bash");
        assert_eq!(parsed.argument.as_deref(), Some("echo $(date)"));
        assert!(parse_rule_pattern("Write(unclosed").is_err());
        assert!(parse_rule_pattern("(x)").is_err());
    }

    #[test]
    fn glob_tool_names_cannot_take_an_argument_pattern() {
        let ws = Workspace::new(std::path::Path::new("/ws"));
        assert!(CompiledPattern::compile("mcp__*(x)", &ws).is_err());
        assert!(CompiledPattern::compile("", &ws).is_err());
        assert!(CompiledPattern::compile("Write(src/[)", &ws).is_err());
    }
}
