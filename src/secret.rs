//! What a secret is: a string that must never be printed (API keys and other credentials),
//! and the one list of environment-variable names that hold secrets, shared by the redactor
//! (`redact`) and the Bash evaluator (`command_safety::secrets`), so both agree.
//!
//! `Debug` and `Display` print `***`; the value is reachable only through [`Secret::expose`],
//! so every place that sends a key somewhere is easy to find.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Name words that mark a secret wherever they stand (`GITHUB_TOKEN_ORG`, `DB_PASSWORD_FILE`).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "APIKEY",
    "WEBHOOK",
    "COOKIE",
];

/// Words that mark a secret as the last word of a longer name (`DB_PASS`, `NPM_AUTH`,
/// `SENTRY_DSN`); alone (`PWD`, `KEY`) they mean something else.
const SECRET_LAST_WORDS: &[&str] = &["KEY", "KEYS", "PASS", "PWD", "PAT", "AUTH", "DSN"];

/// Substrings that mark a secret inside one word (`MYPASSWD`, `DBPASSWORD`).
const SECRET_INFIXES: &[&str] = &["PASSWORD", "PASSWD", "SECRET", "APIKEY", "PRIVATEKEY"];

/// Whether an environment variable name looks like it holds a secret: the one list, used
/// by the redactor and by the Bash evaluator (`$GITHUB_TOKEN` needs permission).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    let Some(last) = words.last() else {
        return false;
    };
    words.iter().any(|w| SECRET_WORDS.contains(w))
        || (words.len() > 1 && SECRET_LAST_WORDS.contains(last))
        || words.windows(2).any(|p| p == ["PRIVATE", "KEY"])
        || words
            .iter()
            .any(|w| SECRET_INFIXES.iter().any(|i| w.contains(i)))
}

#[cfg(test)]
mod tests {
    use super::{Secret, is_secret_name};

    #[test]
    fn secret_looking_names() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "DB_PASSWD",
            "MYPASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_CREDENTIALS",
            "DOCKER_CREDS",
            "NPM_AUTH",
            "DB_PASS",
            "DB_PWD",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "GH_PAT",
            "TOKEN",
            "SECRET",
            "GITHUB_TOKEN_ORG",
            "SSH_PRIVATE_KEY_PEM",
            "client-secret",
            "MY_APIKEY",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "PWD",
            "OLDPWD",
            "KEYBOARD",
            "TOKENIZER_DIR",
            "TOKENIZERS_PARALLELISM",
            "CARGO_TARGET_DIR",
            "SSH_AUTH_SOCK",
            "GIT_AUTHOR_NAME",
            "AWS_ACCESS_KEY_ID",
            "KEY",
            "",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn debug_and_display_hide_the_value() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?} {s}"), "*** ***");
        assert_eq!(s.expose(), "sk-live-123");
    }
}
