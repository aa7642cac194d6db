//! What each model (not provider) family accepts in a request, in one table, with the source of each fact.
//!
//! Servers differ in which request parameters they accept, and a rejected parameter fails the
//! whole run. The decisions here are made from the model name and the endpoint before the
//! first request; what a server still rejects by name is dropped once, with a warning (see
//! [`rejected_param`]).

/// Request settings for one OpenAI-compatible model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenAiParams {
    /// Send the output limit as `max_completion_tokens` instead of `max_tokens`.
    pub(crate) max_completion_tokens: bool,
    /// Send `temperature` (and other sampling parameters) at all.
    pub(crate) sampling: bool,
    /// Send `stream_options: {include_usage: true}`.
    pub(crate) stream_options: bool,
    /// Send the turns in the strict order Mistral's validator wants
    /// ([`super::turn_order`]).
    pub(crate) strict_order: bool,
}

/// One fact about a model family, with where it comes from.
struct Fact {
    /// Lowercase model-name prefixes (after any `vendor/` routing prefix).
    prefixes: &'static [&'static str],
    /// Prefixes that look like the family but are not (checked first).
    except: &'static [&'static str],
    max_completion_tokens: bool,
    sampling: bool,
    #[allow(dead_code)]
    source: &'static str,
}

/// OpenAI's reasoning models reject `max_tokens` ("Unsupported parameter: 'max_tokens' …
/// Use 'max_completion_tokens' instead") and every sampling parameter other than the default.
const OPENAI_FAMILIES: &[Fact] = &[
    Fact {
        prefixes: &["o1", "o3", "o4"],
        except: &[],
        max_completion_tokens: true,
        sampling: false,
        source: "platform.openai.com/docs/guides/reasoning (reasoning models: max_completion_tokens; unsupported parameters)",
    },
    Fact {
        prefixes: &["gpt-5"],
        except: &["gpt-5-chat"],
        max_completion_tokens: true,
        sampling: false,
        source: "platform.openai.com/docs/models/gpt-5 (a reasoning model; gpt-5-chat-latest is not)",
    },
];

/// Hosts whose validator forbids unknown fields, `stream_options` among them: Mistral answers
/// 422 `extra_forbidden` (docs.mistral.ai/api, chat completion request schema has no
/// `stream_options`).
const NO_STREAM_OPTIONS_HOSTS: &[&str] = &["api.mistral.ai"];

/// The request settings for `model` at `api_base`; `stream_usage` is the job's setting
/// (`model.stream_usage`, default on).
pub(crate) fn openai_params(model: &str, api_base: &str, stream_usage: bool) -> OpenAiParams {
    let name = bare_name(model);
    let fact = OPENAI_FAMILIES.iter().find(|f| {
        f.prefixes.iter().any(|p| name.starts_with(p))
            && !f.except.iter().any(|p| name.starts_with(p))
    });
    let host_rejects = NO_STREAM_OPTIONS_HOSTS
        .iter()
        .any(|h| host_of(api_base).eq_ignore_ascii_case(h));
    OpenAiParams {
        max_completion_tokens: fact.is_some_and(|f| f.max_completion_tokens),
        sampling: fact.is_none_or(|f| f.sampling),
        stream_options: stream_usage && !host_rejects,
        strict_order: super::turn_order::strict_from_start(model, host_of(api_base)),
    }
}

/// The model name without a routing prefix (`openai/o3` on OpenRouter is `o3`), lowercased.
fn bare_name(model: &str) -> String {
    model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase()
}

fn host_of(api_base: &str) -> &str {
    let rest = api_base.split_once("://").map_or(api_base, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    host.rsplit_once('@').map_or(host, |(_, h)| h)
}

/// Output-token ceilings of Anthropic models: a request above the ceiling is refused
/// ("max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for
/// claude-3-haiku-20240307"). Source: docs.anthropic.com/en/docs/about-claude/models
/// (model comparison table, "Max output"). Longest prefix first.
const ANTHROPIC_CEILINGS: &[(&str, u32)] = &[
    ("claude-3-5-haiku", 8192),
    ("claude-3-5-sonnet", 8192),
    ("claude-3-7-sonnet", 64000),
    ("claude-3-haiku", 4096),
    ("claude-3-opus", 4096),
    ("claude-3-sonnet", 4096),
    ("claude-haiku-4", 64000),
    ("claude-opus-4-1", 32000),
    ("claude-opus-4-5", 64000),
    ("claude-opus-4", 32000),
    ("claude-sonnet-4", 64000),
];

/// What cn-run asks for when the job sets no `max_tokens`.
pub(crate) const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 8192;

/// The output ceiling of an Anthropic model, when the table knows it.
pub(crate) fn anthropic_ceiling(model: &str) -> Option<u32> {
    let name = bare_name(model);
    ANTHROPIC_CEILINGS
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, ceiling)| *ceiling)
}

/// `max_tokens` for an Anthropic request: the job's value, else the default (raised above a
/// thinking budget, as the API requires `budget_tokens < max_tokens`), capped at the model's
/// ceiling when the job did not ask for more on purpose.
pub(crate) fn anthropic_max_tokens(model: &str, job: Option<u32>, thinking: Option<u32>) -> u32 {
    if let Some(n) = job {
        return n;
    }
    let wanted = thinking.map_or(ANTHROPIC_DEFAULT_MAX_TOKENS, |budget| {
        budget.saturating_add(ANTHROPIC_DEFAULT_MAX_TOKENS)
    });
    anthropic_ceiling(model).map_or(wanted, |ceiling| wanted.min(ceiling))
}

/// The ceiling a server named when it refused `max_tokens` ("… > 4096, which is the maximum
/// allowed …").
pub(crate) fn ceiling_in_error(message: &str) -> Option<u32> {
    let lower = message.to_ascii_lowercase();
    if !lower.contains("max_tokens") || !lower.contains("maximum") {
        return None;
    }
    let after = &message[message.find('>')? + 1..];
    let digits: String = after
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// An optional request parameter a server may refuse by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    StreamOptions,
    Temperature,
    MaxTokens,
    MaxCompletionTokens,
}

impl Param {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Param::StreamOptions => "stream_options",
            Param::Temperature => "temperature",
            Param::MaxTokens => "max_tokens",
            Param::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// The parameter a 400/422 refusal names, among those `sent`. The message must say the
/// parameter is not accepted (unsupported, unrecognized, extra, not permitted), so an error
/// that only mentions a value ("max_tokens is too large") is not taken for one.
pub(crate) fn rejected_param(message: &str, sent: &[Param]) -> Option<Param> {
    let lower = message.to_ascii_lowercase();
    const REFUSALS: &[&str] = &[
        "unsupported parameter",
        "unsupported value",
        "not supported",
        "unrecognized",
        "unknown",
        "extra_forbidden",
        "extra inputs are not permitted",
        "extra fields not permitted",
        "not allowed",
        "does not support",
        "is not supported",
    ];
    if !REFUSALS.iter().any(|r| lower.contains(r)) {
        return None;
    }
    // No name is a substring of another (`max_completion_tokens` has no `max_tokens`).
    sent.iter().copied().find(|p| lower.contains(p.name()))
}

#[cfg(test)]
#[path = "model_params_tests.rs"]
mod tests;
