//! The payload of `config.resolved`: the run's resolved configuration, each value with
//! where it came from, as `cn-run explain` prints it and the session keeps it.
//!
//! The shape is written once, here. `config::ConfigView` is this record with the
//! configuration's own types filled in (the provider family, `on_ask`, the flag struct);
//! the event carries their words and the flags as [`ResolvedFlags`] (the same fields, in
//! words), so the events import nothing from the configuration and the bytes are the same
//! either way (`config::tests` checks every flag).

use serde::{Deserialize, Serialize};

/// The resolved configuration of a run. `P` is the provider family, `A` what a call
/// needing approval does, `F` the flags as given; the event holds their words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "ResolvedConfig")]
pub struct ResolvedConfig<P = String, A = String, F = ResolvedFlags> {
    pub job: String,
    pub workspace: String,
    pub model: ResolvedModel<P>,
    pub limits: ResolvedLimits,
    pub on_ask: A,
    pub on_ask_source: String,
    pub trust: ResolvedTrust,
    pub require_sandbox: bool,
    /// The flags as given (restored by `--resume`).
    pub flags: F,
}

/// The model a run talks to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "ResolvedModel")]
pub struct ResolvedModel<P = String> {
    pub provider: P,
    pub name: String,
    pub api_base: Option<String>,
    pub context_length: u64,
    pub context_length_source: String,
    pub max_tokens: Option<u32>,
}

/// The flags a run was given (`config::Settings`, as `--resume` reads them back), in
/// words: a flag not given is null, false or empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ResolvedFlags {
    /// `--provider`: the provider family.
    pub provider: Option<String>,
    /// `--api-base`.
    pub api_base: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--api-key-env`: the variable's name (never the key).
    pub api_key_env: Option<String>,
    /// `--script`, absolute.
    pub script: Option<String>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--timeout`, as written (`15m`).
    pub timeout: Option<String>,
    /// `--max-cost-usd`.
    pub max_cost_usd: Option<f64>,
    /// `--on-ask`.
    pub on_ask: Option<String>,
    /// `--param NAME=VALUE`, as `[name, value]` pairs.
    pub params: Vec<(String, String)>,
    /// `--allow` patterns.
    pub allow: Vec<String>,
    /// `--ask` patterns.
    pub ask: Vec<String>,
    /// `--exclude` patterns.
    pub exclude: Vec<String>,
    /// `--auto`.
    pub auto: bool,
    /// `--readonly`.
    pub readonly: bool,
    /// `--untrusted`.
    pub untrusted: bool,
    /// `--base-ref`.
    pub base_ref: Option<String>,
    /// `--workspace`, absolute.
    pub workspace: Option<String>,
    /// `--require-sandbox`.
    pub require_sandbox: bool,
    /// Whether `--upload-url` was given (the URL is a secret and is never kept).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub upload_url_given: bool,
    /// `--store`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

/// The limits a run ends at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolvedLimits {
    pub max_turns: Option<u32>,
    pub timeout_s: f64,
    pub timeout_source: String,
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_calls_per_response: usize,
}

/// What the run trusts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolvedTrust {
    pub untrusted: bool,
    pub untrusted_paths: Vec<String>,
    pub base_ref: Option<String>,
    /// Whether an upload URL was given (the URL is a secret and is not shown).
    pub upload_url: bool,
}

impl<P, A, F> ResolvedConfig<P, A, F> {
    /// The same record with the provider, `on_ask` and the flags as the event carries them.
    pub fn into_words(
        self,
        provider: impl FnOnce(P) -> String,
        on_ask: impl FnOnce(A) -> String,
        flags: impl FnOnce(F) -> ResolvedFlags,
    ) -> ResolvedConfig {
        let m = self.model;
        ResolvedConfig {
            job: self.job,
            workspace: self.workspace,
            model: ResolvedModel {
                provider: provider(m.provider),
                name: m.name,
                api_base: m.api_base,
                context_length: m.context_length,
                context_length_source: m.context_length_source,
                max_tokens: m.max_tokens,
            },
            limits: self.limits,
            on_ask: on_ask(self.on_ask),
            on_ask_source: self.on_ask_source,
            trust: self.trust,
            require_sandbox: self.require_sandbox,
            flags: flags(self.flags),
        }
    }
}

/// A whole record as events.jsonl writes it, for tests.
#[cfg(test)]
pub(crate) fn sample(flags: serde_json::Value) -> ResolvedConfig {
    let mut value: serde_json::Value = serde_json::from_str(SAMPLE).unwrap();
    value["flags"] = flags;
    serde_json::from_value(value).unwrap()
}

#[cfg(test)]
const SAMPLE: &str = r#"{"job":"j","workspace":"/w","model":{"provider":"script","name":"m","api_base":null,"context_length":128000,"context_length_source":"default","max_tokens":null},"limits":{"max_turns":5,"timeout_s":1800.0,"timeout_source":"default","max_cost_usd":null,"max_tokens":null,"max_calls_per_response":16},"on_ask":"deny","on_ask_source":"default","trust":{"untrusted":false,"untrusted_paths":[],"base_ref":null,"upload_url":false},"require_sandbox":false,"flags":{"max_turns":5}}"#;
