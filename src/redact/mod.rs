//! The secret registry and the redaction every output goes through.
//!
//! A run registers its secrets once: the provider key, the values of environment variables
//! whose names look secret (`crate::secret::is_secret_name`, the list the Bash evaluator
//! uses too) or that the job names in `redact:`, upload URLs, MCP `env:`/`headers:`
//! values and the credentials a checkout left in the repository's git config. Each is matched in every spelling of [`forms`] (plain, JSON-escaped, reversed,
//! URL-encoded, hex, base64) and replaced by `[REDACTED]` in events, results, sessions,
//! uploads, JUnit and logs; stdout and stderr go through [`redact_output`], which knows
//! the secrets of every run of the process. Matching is one Aho-Corasick pass, so redacting
//! a large tool output costs about as much as copying it.

mod forms;
mod git_credentials;

use std::borrow::Cow;
use std::sync::RwLock;

use aho_corasick::{AhoCorasick, MatchKind};

pub use forms::Form;
pub use git_credentials::git_credentials;

/// What a redacted value is replaced with.
pub const MASK: &str = "[REDACTED]";

/// Values shorter than this are not treated as secrets: masking `1` or `true` everywhere
/// would destroy outputs without protecting anything.
const MIN_SECRET_LEN: usize = 6;

/// Replaces known secret values in text.
#[derive(Clone, Default)]
pub struct Redactor {
    matcher: Option<AhoCorasick>,
    /// The form of each pattern, by pattern index.
    forms: Vec<Form>,
    values: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} values)", self.values.len())
    }
}

/// Whether an environment variable name holds a secret: it looks like one, or the job
/// lists it (`redact:`).
pub fn is_secret_name(name: &str, extra: &[String]) -> bool {
    crate::secret::is_secret_name(name) || extra.iter().any(|e| e.eq_ignore_ascii_case(name))
}

impl Redactor {
    /// A redactor for `values` (the provider key, explicit secrets) plus every variable of
    /// `env` whose name looks secret or is listed in `extra_names`.
    pub fn new<'a>(
        values: impl IntoIterator<Item = &'a str>,
        env: impl IntoIterator<Item = (String, String)>,
        extra_names: &[String],
    ) -> Self {
        let mut secrets: Vec<String> = values.into_iter().map(str::to_owned).collect();
        for (name, value) in env {
            if is_secret_name(&name, extra_names) {
                secrets.push(value);
            }
        }
        Self::from_values(secrets)
    }

    /// A redactor for exactly these values (those too short to be secrets are skipped).
    pub fn from_values(mut secrets: Vec<String>) -> Self {
        secrets.retain(|v| v.trim().len() >= MIN_SECRET_LEN);
        secrets.sort();
        secrets.dedup();
        let mut patterns: Vec<(String, Form)> =
            secrets.iter().flat_map(|s| forms::forms(s)).collect();
        // Longest first, so a secret that contains another is masked whole.
        patterns.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        patterns.dedup_by(|a, b| a.0 == b.0);
        let matcher = if patterns.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(patterns.iter().map(|p| &p.0))
                .ok()
        };
        Redactor {
            matcher,
            forms: patterns.into_iter().map(|p| p.1).collect(),
            values: secrets,
        }
    }

    /// This redactor and `other`'s secrets together.
    pub fn merged(&self, other: &Redactor) -> Redactor {
        let mut values = self.values.clone();
        values.extend(other.values.iter().cloned());
        Self::from_values(values)
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
                let masks = vec![MASK; self.forms.len()];
                Cow::Owned(m.replace_all(text, &masks))
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// Whether `text` contains a secret value in any of its spellings.
    pub fn finds_secret(&self, text: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(text))
    }

    /// How a secret is spelled in `text` (an outgoing URL, header or body), also after
    /// URL-decoding (up to three times), with white space removed or letters lower-cased
    /// (mixed-case hex). `None`: no registered secret in any form.
    pub fn leak(&self, text: &str) -> Option<Form> {
        let m = self.matcher.as_ref()?;
        let mut candidates = vec![text.to_owned()];
        let mut current = text.to_owned();
        for _ in 0..3 {
            let decoded = percent_encoding::percent_decode_str(&current.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned();
            let plus_kept = percent_encoding::percent_decode_str(&current)
                .decode_utf8_lossy()
                .into_owned();
            if decoded == current && plus_kept == current {
                break;
            }
            candidates.push(decoded);
            candidates.push(plus_kept.clone());
            current = plus_kept;
        }
        let mut extra: Vec<String> = Vec::new();
        for c in &candidates {
            extra.push(c.chars().filter(|ch| !ch.is_whitespace()).collect());
            extra.push(c.to_ascii_lowercase());
        }
        candidates.extend(extra);
        candidates.iter().find_map(|c| {
            m.find(c.as_str())
                .and_then(|hit| self.forms.get(hit.pattern().as_usize()).copied())
        })
    }
}

/// Every secret registered by any run of this process (parallel runs add theirs).
static REGISTRY: RwLock<Option<Redactor>> = RwLock::new(None);

/// Add a run's secrets to the process-wide registry that [`redact_output`] uses.
pub fn register(r: &Redactor) {
    if r.is_empty() {
        return;
    }
    if let Ok(mut guard) = REGISTRY.write() {
        let merged = match guard.as_ref() {
            Some(existing) => existing.merged(r),
            None => r.clone(),
        };
        *guard = Some(merged);
    }
}

/// `text` with every registered secret masked: what stdout and stderr carry.
pub fn redact_output(text: &str) -> Cow<'_, str> {
    match REGISTRY.read() {
        Ok(guard) => match guard.as_ref() {
            Some(r) => Cow::Owned(r.redact(text).into_owned()),
            None => Cow::Borrowed(text),
        },
        Err(_) => Cow::Borrowed(text),
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
