//! Matchers as Claude Code reads them: absent, empty or `*` match everything; otherwise
//! the text is a regular expression (a plain name is one) that must match a whole name.
//! A tool matches when any of its names does (cn-run's `Search` or Claude's `Grep`).

use regex::Regex;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub struct Matcher(Option<Regex>);

impl Matcher {
    /// Compiles `text`; a malformed expression is an error naming it.
    pub fn new(text: Option<&str>) -> Result<Matcher, String> {
        let text = text.map(str::trim).unwrap_or_default();
        if text.is_empty() || text == "*" {
            return Ok(Matcher(None));
        }
        Regex::new(&format!("^(?:{text})$"))
            .map(|r| Matcher(Some(r)))
            .map_err(|e| format!("matcher `{text}` is not a valid regular expression: {e}"))
    }

    /// Whether any of `names` matches.
    pub fn matches(&self, names: &[&str]) -> bool {
        match &self.0 {
            None => true,
            Some(r) => names.iter().any(|n| r.is_match(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> Matcher {
        Matcher::new(Some(text)).unwrap()
    }

    #[test]
    fn matchers_follow_claude_codes_reading() {
        assert!(Matcher::new(None).unwrap().matches(&["Bash"]));
        assert!(m("").matches(&["Read"]));
        assert!(m("*").matches(&["Read"]));
        assert!(m("Bash").matches(&["Bash"]));
        assert!(!m("Bash").matches(&["BashOutput"]), "a name matches whole");
        assert!(m("Edit|Write").matches(&["Write"]));
        assert!(m("Grep").matches(&["Search", "Grep"]));
        assert!(m("Search").matches(&["Search", "Grep"]));
        assert!(m("mcp__github__.*").matches(&["mcp__github__create_issue"]));
        assert!(!m("mcp__github__.*").matches(&["mcp__gitlab__x"]));
        assert!(
            !m("bash").matches(&["Bash"]),
            "case matters, as in Claude Code"
        );
        assert!(Matcher::new(Some("(")).is_err());
    }
}
