//! Secret redaction for every output a run writes.
//!
//! The provider key and the values of environment variables whose names look secret
//! (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, plus names the job adds) are replaced by
//! `[REDACTED]` in events, results, sessions, uploads, JUnit and logs. Matching is one
//! Aho-Corasick pass, so redacting a large tool output costs about as much as copying it.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, MatchKind};

/// What a redacted value is replaced with.
pub const MASK: &str = "[REDACTED]";

/// Values shorter than this are not treated as secrets: masking `1` or `true` everywhere
/// would destroy outputs without protecting anything.
const MIN_SECRET_LEN: usize = 6;

/// Replaces known secret values in text.
#[derive(Clone, Default)]
pub struct Redactor {
    matcher: Option<AhoCorasick>,
    count: usize,
    values: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} values)", self.count)
    }
}

/// Whether an environment variable name looks like it holds a secret.
pub fn is_secret_name(name: &str, extra: &[String]) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_KEY")
        || upper.ends_with("_TOKEN")
        || upper.ends_with("_SECRET")
        || upper.contains("PASSWORD")
        || upper == "TOKEN"
        || upper == "SECRET"
        || extra.iter().any(|e| e.eq_ignore_ascii_case(name))
}

impl Redactor {
    /// A redactor for `values` (the provider key, explicit secrets) plus every variable of
    /// `env` whose name looks secret or is listed in `extra_names`.
    pub fn new<'a>(
        values: impl IntoIterator<Item = &'a str>,
        env: impl IntoIterator<Item = (String, String)>,
        extra_names: &[String],
    ) -> Self {
        let mut secrets: Vec<String> = values
            .into_iter()
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .map(str::to_owned)
            .collect();
        for (name, value) in env {
            if value.len() >= MIN_SECRET_LEN && is_secret_name(&name, extra_names) {
                secrets.push(value);
            }
        }
        secrets.sort();
        secrets.dedup();
        let mut patterns = Vec::new();
        for s in &secrets {
            patterns.push(s.clone());
            // The same value as it appears inside a JSON string.
            let escaped = serde_json::to_string(s).unwrap_or_default();
            let inner = escaped.trim_matches('"');
            if inner != s {
                patterns.push(inner.to_owned());
            }
        }
        patterns.sort();
        patterns.dedup();
        // Longest first, so a secret that contains another is masked whole.
        patterns.sort_by_key(|p| std::cmp::Reverse(p.len()));
        let count = patterns.len();
        let matcher = if patterns.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .ok()
        };
        Redactor {
            matcher,
            count,
            values: secrets,
        }
    }

    /// The secret values themselves (for `::add-mask::` in GitHub Actions).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// A redactor that changes nothing.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// `text` with every secret value replaced by [`MASK`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.matcher {
            Some(m) if m.is_match(text) => {
                let masks = vec![MASK; self.count];
                Cow::Owned(m.replace_all(text, &masks))
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// Whether `text` contains a secret value.
    pub fn finds_secret(&self, text: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_key_and_secret_looking_env_values() {
        let env = vec![
            ("GITHUB_TOKEN".to_owned(), "ghp_abcdef123456".to_owned()),
            ("HOME".to_owned(), "/home/runner".to_owned()),
            ("DB_PASSWORD_FILE".to_owned(), "hunter2hunter2".to_owned()),
            ("SHORT_KEY".to_owned(), "abc".to_owned()),
        ];
        let r = Redactor::new(["sk-live-999999"], env, &[]);
        let text =
            "key sk-live-999999 tok ghp_abcdef123456 pw hunter2hunter2 home /home/runner abc";
        assert_eq!(
            r.redact(text),
            "key [REDACTED] tok [REDACTED] pw [REDACTED] home /home/runner abc"
        );
    }

    #[test]
    fn masks_json_escaped_form_and_extra_names() {
        let env = vec![("DEPLOY_HOOK".to_owned(), "a\"quoted\\secret".to_owned())];
        let r = Redactor::new([], env, &["deploy_hook".to_owned()]);
        let json = serde_json::to_string("x a\"quoted\\secret y").unwrap();
        assert!(!r.redact(&json).contains("quoted"));
    }

    #[test]
    fn no_secrets_borrows() {
        let r = Redactor::none();
        assert!(matches!(r.redact("plain"), Cow::Borrowed(_)));
    }
}
