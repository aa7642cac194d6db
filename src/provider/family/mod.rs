//! One description per provider family: what the job file calls it, where its key comes
//! from, what it needs and accepts, how many tools a request may carry, and how its client
//! is built. Job validation, the run's set-up, the tool trim and the key lookup all read
//! the description instead of matching on the family.
//!
//! Adding a family is one file here (its [`Family`] and its client's constructor) and one
//! row: a variant of [`ProviderKind`] with its arm in [`ProviderKind::family`]. The wire
//! format, stream reader and error words stay in the family's own module (`openai/`,
//! `anthropic/`, `script/`), each read through [`super::ModelClient`].

mod anthropic;
mod azure;
mod openai;
#[cfg(test)]
mod probe;
mod script;

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Connection, ModelClient};

// The provider families a job may name (`model.provider`); no doc comment, so the job
// schema keeps its words.
// `Default` is the family `-p` uses when nothing names one.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat completions endpoint.
    #[default]
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Azure OpenAI: `{api_base}/openai/deployments/{deployment}/chat/completions?api-version=…`
    /// with an `api-key` header.
    Azure,
    /// Scripted turns from a file: no key, no network.
    Script,
    // A test-only family (`probe.rs`), added as the README says a family is added.
    #[cfg(test)]
    Probe,
}

impl ProviderKind {
    /// The family's description: the one table row per family.
    pub fn family(self) -> &'static Family {
        match self {
            ProviderKind::Openai => &openai::FAMILY,
            ProviderKind::Anthropic => &anthropic::FAMILY,
            ProviderKind::Azure => &azure::FAMILY,
            ProviderKind::Script => &script::FAMILY,
            #[cfg(test)]
            ProviderKind::Probe => &probe::FAMILY,
        }
    }

    /// Every family, in the order of the enum.
    pub const ALL: &'static [ProviderKind] = &[
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Azure,
        ProviderKind::Script,
        #[cfg(test)]
        ProviderKind::Probe,
    ];

    /// The family `-p PROMPT` runs with when `--provider` names none: one that reads a
    /// script when `--script` is given, else the default.
    pub fn for_prompt(script_given: bool) -> ProviderKind {
        let reads_script = || {
            Self::ALL
                .iter()
                .copied()
                .find(|k| k.family().accepts.script)
        };
        script_given
            .then(reads_script)
            .flatten()
            .unwrap_or_default()
    }
}

/// Job settings only some families accept (any other family refuses them, located).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accepts {
    /// `model.script`: the turns come from a file.
    pub script: bool,
    /// `model.thinking`: an extended-thinking budget.
    pub thinking: bool,
    /// `model.deployment` and `model.api_version`.
    pub deployment: bool,
}

/// What one provider family is, for every part of cn-run that must know.
#[derive(Debug)]
pub struct Family {
    /// The name in job files, flags and events (`openai`, `anthropic`, …).
    pub name: &'static str,
    /// The environment variable that holds the key when the job names no `api_key_env`.
    pub key_env: Option<&'static str>,
    /// Whether the client refuses to start without a key (a local OpenAI-compatible server
    /// often needs none; Anthropic always does).
    pub needs_key: bool,
    /// When the job must give `model.api_base` (there is no usual endpoint): an example of
    /// one, for the message that asks for it.
    pub needs_api_base: Option<&'static str>,
    /// Whether requests go over the network (the script family reads a file: no TLS, no
    /// key, no cost).
    pub network: bool,
    /// The most tools one request may carry, when the family has a limit.
    pub max_tools: Option<usize>,
    pub accepts: Accepts,
    /// The model name `-p` runs with when `--model` gives none (a family with nothing to
    /// choose); `None`: `-p` needs `--model`.
    pub default_model: Option<&'static str>,
    /// What `cn-run validate` checks of the settings with no key and no network (the
    /// script family: that its script file parses).
    pub offline_check: Option<OfflineCheck>,
    /// Builds the client from the job's model settings.
    pub build: fn(&ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError>,
}

/// A check of a family's settings that needs neither a key nor the network.
#[derive(Debug)]
pub struct OfflineCheck {
    /// The job-file field a problem is reported at (`model.script`).
    pub field: &'static str,
    pub check: fn(&ClientSettings) -> Result<(), FamilyError>,
}

impl Family {
    /// The names of the families that accept a setting (`which` picks it), as a job-file
    /// message says them: `` `provider: anthropic` `` (joined with "or").
    pub fn accepting(which: impl Fn(&Accepts) -> bool) -> String {
        ProviderKind::ALL
            .iter()
            .map(|k| k.family())
            .filter(|f| which(&f.accepts))
            .map(|f| format!("`provider: {}`", f.name))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// The job's model settings a client is built from (the key and headers already read from
/// the environment).
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// Endpoint, key, model, headers and timeouts; `api_base` is the job's or empty.
    pub connection: Connection,
    /// `model.stream_usage` (OpenAI-compatible families).
    pub stream_usage: bool,
    /// `model.thinking.budget_tokens`, when thinking is on.
    pub thinking_budget: Option<u32>,
    /// `model.deployment` (Azure; the model name when absent).
    pub deployment: Option<String>,
    /// `model.api_version` (Azure).
    pub api_version: Option<String>,
    /// `model.script`, resolved.
    pub script: Option<PathBuf>,
}

impl ClientSettings {
    /// The job's endpoint, or `default` when it gave none.
    fn connection_or(&self, default: &str) -> Connection {
        let mut c = self.connection.clone();
        if c.api_base.is_empty() {
            default.clone_into(&mut c.api_base);
        }
        c
    }
}

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    /// A setting is wrong or missing (a usage error, exit 2).
    #[error("{0}")]
    Usage(String),
    /// The HTTP stack could not be built (the environment).
    #[error("{0}")]
    Client(String),
}

#[cfg(test)]
#[path = "family_tests.rs"]
mod tests;
