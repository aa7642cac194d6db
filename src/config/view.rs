//! The resolved configuration as a record: what `explain` prints and what the session keeps
//! (secrets masked when the session is written; the upload URL is never in it). It holds
//! the flags as given, so `--resume` can restore them.

use serde::{Deserialize, Serialize};

use super::{RunConfig, Settings};
use crate::job::{OnAsk, ProviderKind};

/// The resolved configuration of a run, each value with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigView {
    pub job: String,
    pub workspace: String,
    pub model: ModelView,
    pub limits: LimitsView,
    pub on_ask: OnAsk,
    pub on_ask_source: String,
    pub trust: TrustView,
    pub require_sandbox: bool,
    /// The flags as given (restored by `--resume`).
    pub flags: Settings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelView {
    pub provider: ProviderKind,
    pub name: String,
    pub api_base: Option<String>,
    pub context_length: u64,
    pub context_length_source: String,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitsView {
    pub max_turns: Option<u32>,
    pub timeout_s: f64,
    pub timeout_source: String,
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_calls_per_response: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustView {
    pub untrusted: bool,
    pub untrusted_paths: Vec<String>,
    pub base_ref: Option<String>,
    /// Whether an upload URL was given (the URL is a secret and is not shown).
    pub upload_url: bool,
}

impl RunConfig {
    /// The record of this configuration.
    pub(crate) fn view(&self) -> ConfigView {
        let (job, m, l) = (&self.job, &self.job.model, &self.job.limits);
        ConfigView {
            job: job.name.clone(),
            workspace: self.workspace.display().to_string(),
            model: ModelView {
                provider: m.provider,
                name: m.name.clone(),
                api_base: m.api_base.clone(),
                context_length: self.context_length,
                context_length_source: self.context_length_source.to_owned(),
                max_tokens: m.max_tokens,
            },
            limits: LimitsView {
                max_turns: l.max_turns,
                timeout_s: self.timeout.as_secs_f64(),
                timeout_source: self.timeout_source.to_owned(),
                max_cost_usd: l.max_cost_usd,
                max_tokens: l.max_tokens,
                max_calls_per_response: self.agent.max_calls,
            },
            on_ask: self.agent.on_ask,
            on_ask_source: super::resolve::on_ask_source(&self.flags).to_owned(),
            trust: TrustView {
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
