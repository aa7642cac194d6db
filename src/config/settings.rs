//! The flags that shape a run, as given: the low layer of the configuration. Parsing only
//! checks their syntax; [`super::RunConfig::resolve`] decides what they mean. This is what
//! a session keeps, so `--resume` brings back the run's flags (trust included) and lays the
//! flags given to the resume over them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::cli::{ExplainArgs, RunArgs};
use crate::job::{OnAsk, ProviderKind};

/// The run-shaping flags of one call. Every field is "not given" by default, so a resume
/// can tell which flags it was given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub provider: Option<ProviderKind>,
    pub api_base: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    /// `--script`, absolute.
    pub script: Option<PathBuf>,
    pub max_turns: Option<u32>,
    pub max_tokens: Option<u32>,
    /// `--timeout` as written (parsed when resolved: a bad one is a usage error).
    pub timeout: Option<String>,
    pub max_cost_usd: Option<f64>,
    pub on_ask: Option<OnAsk>,
    pub params: Vec<(String, String)>,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub exclude: Vec<String>,
    pub auto: bool,
    pub readonly: bool,
    pub require_sandbox: bool,
    pub untrusted: bool,
    pub base_ref: Option<String>,
    /// `-C DIR`, absolute.
    pub workspace: Option<PathBuf>,
    /// Whether `--upload-url` was given. The URL itself is a secret and is never stored.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub upload_url_given: bool,
    /// `--upload-url` (never serialised).
    #[serde(skip)]
    pub upload_url: Option<String>,
    /// `--store URL` (no credential in it: kept, so a resume writes to the same store).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

fn absolute(p: &Option<PathBuf>) -> Option<PathBuf> {
    p.as_ref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
}

impl From<&RunArgs> for Settings {
    fn from(a: &RunArgs) -> Self {
        Settings {
            provider: a.provider,
            api_base: a.api_base.clone(),
            model: a.model.clone(),
            api_key_env: a.api_key_env.clone(),
            script: absolute(&a.script),
            max_turns: a.max_turns,
            max_tokens: a.max_tokens,
            timeout: a.timeout.clone(),
            max_cost_usd: a.max_cost_usd,
            on_ask: a.on_ask,
            params: a.params.clone(),
            allow: a.allow.clone(),
            ask: a.ask.clone(),
            exclude: a.exclude.clone(),
            auto: a.auto,
            readonly: a.readonly,
            require_sandbox: a.require_sandbox,
            untrusted: a.untrusted,
            base_ref: a.base_ref.clone(),
            workspace: absolute(&a.workspace),
            upload_url_given: a.upload_url.is_some(),
            upload_url: a.upload_url.clone(),
            store: a.store.clone(),
        }
    }
}

impl From<&ExplainArgs> for Settings {
    fn from(a: &ExplainArgs) -> Self {
        Settings {
            params: a.params.clone(),
            allow: a.allow.clone(),
            ask: a.ask.clone(),
            exclude: a.exclude.clone(),
            auto: a.auto,
            readonly: a.readonly,
            untrusted: a.untrusted,
            base_ref: a.base_ref.clone(),
            workspace: absolute(&a.workspace),
            ..Settings::default()
        }
    }
}

impl Settings {
    /// The stored settings of a run with the flags given now laid over them: a value given
    /// now wins, rules and parameters given now are added (a parameter of the same name
    /// replaces the stored one), a mode flag given now replaces the stored one, and trust
    /// can only be kept or raised (no flag lowers it).
    pub fn overlay(self, now: Settings) -> Settings {
        let mut params = self.params;
        params.retain(|(k, _)| !now.params.iter().any(|(n, _)| n == k));
        params.extend(now.params);
        let mode_given = now.auto || now.readonly;
        let join = |mut a: Vec<String>, b: Vec<String>| {
            for p in b {
                if !a.contains(&p) {
                    a.push(p);
                }
            }
            a
        };
        Settings {
            provider: now.provider.or(self.provider),
            api_base: now.api_base.or(self.api_base),
            model: now.model.or(self.model),
            api_key_env: now.api_key_env.or(self.api_key_env),
            script: now.script.or(self.script),
            max_turns: now.max_turns.or(self.max_turns),
            max_tokens: now.max_tokens.or(self.max_tokens),
            timeout: now.timeout.or(self.timeout),
            max_cost_usd: now.max_cost_usd.or(self.max_cost_usd),
            on_ask: now.on_ask.or(self.on_ask),
            params,
            allow: join(self.allow, now.allow),
            ask: join(self.ask, now.ask),
            exclude: join(self.exclude, now.exclude),
            auto: if mode_given { now.auto } else { self.auto },
            readonly: if mode_given {
                now.readonly
            } else {
                self.readonly
            },
            require_sandbox: self.require_sandbox || now.require_sandbox,
            untrusted: self.untrusted || now.untrusted,
            base_ref: now.base_ref.or(self.base_ref),
            workspace: now.workspace.or(self.workspace),
            upload_url_given: self.upload_url_given || now.upload_url_given,
            upload_url: now.upload_url,
            store: now.store.or(self.store),
        }
    }

    /// The settings of a session written before they were stored: its recorded
    /// command-line words, parsed as then.
    pub(crate) fn from_recorded_args(words: &[String]) -> Result<Settings, super::ConfigError> {
        use clap::Parser;
        let argv = std::iter::once("cn-run".to_owned()).chain(words.iter().cloned());
        let cli = crate::cli::Cli::try_parse_from(argv).map_err(|e| {
            super::ConfigError::Flag(format!("the recorded flags no longer parse: {e}"))
        })?;
        Ok(Settings::from(&cli.run))
    }
}
