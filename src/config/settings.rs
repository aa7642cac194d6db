//! The flags that shape a run, as given: the low layer of the configuration. Parsing only
//! checks their syntax; [`super::RunConfig::resolve`] decides what they mean. This is what
//! a session keeps, so `--resume` brings back the run's flags (trust included) and lays the
//! flags given to the resume over them.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::cli::parse_param;
use crate::job::{OnAsk, ProviderKind};

/// The run-shaping flags of one call: declared here once, flattened into `cn-run run`'s
/// command line (the flags *are* this value; nothing copies them field by field). Every
/// field is "not given" by default, so a resume can tell which flags it was given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(default)]
pub struct Settings {
    /// Model provider for `-p` (default: openai, or script with --script).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,
    /// API base URL (OpenAI-compatible endpoint for `openai`).
    #[arg(long, alias = "base-url", value_name = "URL")]
    pub api_base: Option<String>,
    /// Model name (overrides the job's).
    #[arg(short = 'm', long)]
    pub model: Option<String>,
    /// Environment variable holding the API key.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Scripted turns file, for `--provider script` (absolute once given).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Maximum model turns (overrides the job).
    #[arg(long)]
    pub max_turns: Option<u32>,
    /// Maximum output tokens of one model response (overrides `model.max_tokens`; Anthropic
    /// requires a value and cn-run picks one below the model's ceiling when none is set).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Wall-clock limit for the run, e.g. 15m (overrides the job; parsed when resolved: a
    /// bad one is a usage error).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Maximum cost in USD (overrides the job).
    #[arg(long, value_name = "USD")]
    pub max_cost_usd: Option<f64>,
    /// What a call needing approval does (overrides the job).
    #[arg(long, value_enum)]
    pub on_ask: Option<OnAsk>,
    /// The policy flags, shared with `cn-run explain`.
    #[command(flatten)]
    #[serde(flatten)]
    pub policy: PolicyArgs,
    /// Refuse to run unless commands are fully contained (as `tools.bash.require_sandbox`).
    #[arg(long)]
    pub require_sandbox: bool,
    /// Whether `--upload-url` was given. The URL itself is a secret and is never stored.
    #[arg(skip)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub upload_url_given: bool,
    /// PUT the session (secrets masked) to this URL while the run goes and at the end
    /// (overrides the job's `upload.url`; `{run_id}` is replaced). Never serialised.
    #[arg(long, value_name = "URL")]
    #[serde(skip)]
    pub upload_url: Option<String>,
    /// Keep the run folder in this run store while the run goes and at its end (overrides
    /// the job's `store:`): `s3://BUCKET/PREFIX`, `gs://…`, `az://…` or a path; credentials
    /// from the environment. No credential in it: kept, so a resume writes to the same store.
    #[arg(long, value_name = "URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

/// The flags that shape a run's policy and workspace, declared once for `cn-run run` and
/// `cn-run explain` (which explains the job as a run with the same flags enforces it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(default)]
pub struct PolicyArgs {
    /// Set a job parameter: `--param path=src/`.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Allow tools matching PATTERN (repeatable), e.g. `Bash(cargo *)`.
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Ask for tools matching PATTERN (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub ask: Vec<String>,
    /// Never offer tools matching PATTERN (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Allow everything except what the safety evaluator disables; commands stay
    /// contained (`--full-auto`, as `codex exec` spells it, works too).
    #[arg(long, alias = "full-auto", conflicts_with = "readonly")]
    pub auto: bool,
    /// Plan mode: no file changes.
    #[arg(long)]
    pub readonly: bool,
    /// Treat the workspace and every tool output as untrusted (a pull request): see
    /// SECURITY.md.
    #[arg(long)]
    pub untrusted: bool,
    /// The trusted commit whose repository instructions apply in untrusted mode.
    #[arg(long, value_name = "REF")]
    pub base_ref: Option<String>,
    /// Workspace directory (overrides the job; `--cd`, as `codex exec` spells it, works
    /// too). Absolute once given.
    #[arg(short = 'C', long, alias = "cd", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

fn absolute(p: Option<PathBuf>) -> Option<PathBuf> {
    p.map(|p| std::path::absolute(&p).unwrap_or(p))
}

impl PolicyArgs {
    /// The flags as given, their path made absolute.
    pub fn as_given(self) -> PolicyArgs {
        PolicyArgs {
            workspace: absolute(self.workspace),
            ..self
        }
    }
}

impl Settings {
    /// The flags as parsed, their paths made absolute and whether `--upload-url` was given
    /// noted (the one thing the session keeps of it).
    pub fn as_given(self) -> Settings {
        Settings {
            script: absolute(self.script),
            policy: self.policy.as_given(),
            upload_url_given: self.upload_url.is_some(),
            ..self
        }
    }

    /// A call's settings that only has policy flags (`cn-run explain`).
    pub fn of_policy(policy: PolicyArgs) -> Settings {
        Settings {
            policy: policy.as_given(),
            ..Settings::default()
        }
    }

    /// The stored settings of a run with the flags given now laid over them: a value given
    /// now wins, rules and parameters given now are added (a parameter of the same name
    /// replaces the stored one), a mode flag given now replaces the stored one, and trust
    /// can only be kept or raised (no flag lowers it).
    pub fn overlay(self, now: Settings) -> Settings {
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
            policy: self.policy.overlay(now.policy),
            require_sandbox: self.require_sandbox || now.require_sandbox,
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
        Ok(cli.run.settings.as_given())
    }
}

impl PolicyArgs {
    /// [`Settings::overlay`] for the policy flags.
    fn overlay(self, now: PolicyArgs) -> PolicyArgs {
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
        PolicyArgs {
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
            untrusted: self.untrusted || now.untrusted,
            base_ref: now.base_ref.or(self.base_ref),
            workspace: now.workspace.or(self.workspace),
        }
    }
}
