//! The resolved configuration as a record: what `explain` prints and what the session keeps
//! (secrets masked when the session is written; the upload URL is never in it). It holds
//! the flags as given, so `--resume` can restore them.

use serde::Serialize;
use serde_json::Value;

use super::{RunConfig, Settings};
use crate::events::{ResolvedConfig, ResolvedLimits, ResolvedModel, ResolvedTrust};
use crate::job::{OnAsk, ProviderKind};

/// The resolved configuration of a run with the configuration's own types: the record
/// `config.resolved` carries ([`ResolvedConfig`]), its shape written there once.
pub type ConfigView = ResolvedConfig<ProviderKind, OnAsk, Settings>;

impl ConfigView {
    /// The record as the `config.resolved` event carries it: the same bytes once written.
    pub(crate) fn into_event(self) -> ResolvedConfig {
        self.into_words(word, word, |flags| {
            serde_json::to_value(flags)
                .and_then(serde_json::from_value)
                .unwrap_or_default()
        })
    }
}

/// A value's word as serde writes it (the provider family, `on_ask`).
fn word(value: impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(word)) => word,
        _ => String::new(),
    }
}

impl RunConfig {
    /// The record of this configuration.
    pub(crate) fn view(&self) -> ConfigView {
        let (job, m, l) = (&self.job, &self.job.model, &self.job.limits);
        ConfigView {
            job: job.name.clone(),
            workspace: self.workspace.display().to_string(),
            model: ResolvedModel {
                provider: m.provider,
                name: m.name.clone(),
                api_base: m.api_base.clone(),
                context_length: self.context_length,
                context_length_source: self.context_length_source.to_owned(),
                max_tokens: m.max_tokens,
            },
            limits: ResolvedLimits {
                max_turns: l.max_turns,
                timeout_s: self.timeout.as_secs_f64(),
                timeout_source: self.timeout_source.to_owned(),
                max_cost_usd: l.max_cost_usd,
                max_tokens: l.max_tokens,
                max_calls_per_response: self.agent.max_calls,
            },
            on_ask: self.agent.on_ask,
            on_ask_source: super::resolve::on_ask_source(&self.flags).to_owned(),
            trust: ResolvedTrust {
                untrusted: self.trust.untrusted,
                untrusted_paths: self.trust.paths.clone(),
                base_ref: self.base_ref.clone(),
                upload_url: self.upload_url.is_some(),
            },
            require_sandbox: self.require_sandbox(),
            flags: self.flags.clone(),
        }
    }
}
