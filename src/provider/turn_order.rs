//! The order of turns every server accepts, and the words a server uses when it refuses one.
//!
//! A request must end with the user (or with tool results): Claude Opus 4.6 and later refuse
//! a last assistant turn ("This model does not support assistant message prefill"), Mistral's
//! validator wants the last role user or tool (code 3230), and models behind a chat template
//! read a last assistant turn as a prefill to continue. cn-run's own history always ends with
//! the user or with tool results (compaction adds a user turn after the summary); a history
//! written otherwise (a session of an older version) gets one closing user turn on the wire.
//!
//! Mistral's validator (mistral-common before April 2026, still served by many deployments)
//! also refuses a user turn right after tool results; for that family, and for any server that
//! refuses an order in the words below, requests are sent in the strict order: a short
//! assistant turn between tool results and a user turn, consecutive user turns joined.

use crate::conversation::Message;

/// The user turn that closes a history ending with the assistant's answer.
pub(crate) const CLOSING_TURN: &str = "continue";

/// The assistant turn put between tool results and a following user turn in the strict order.
pub(crate) const BRIDGE_TURN: &str = "(tool results received)";

/// One way a server refuses the order of the turns, and where the words come from.
struct Refusal {
    /// Lowercase words of the refusal.
    words: &'static str,
    #[allow(dead_code)]
    source: &'static str,
}

const ORDER_REFUSALS: &[Refusal] = &[
    Refusal {
        words: "does not support assistant message prefill",
        source: "Anthropic Messages API, Claude Opus 4.6+: \"This model does not support assistant message prefill. The conversation must end with a user message.\" (platform.claude.com, migrating away from prefill)",
    },
    Refusal {
        words: "conversation must end with a user message",
        source: "Anthropic Messages API (same refusal, second sentence), also through Bedrock and Vertex",
    },
    Refusal {
        words: "expected last role user or tool",
        source: "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py _validate_last_message (api.mistral.ai code 3230)",
    },
    Refusal {
        words: "unexpected role 'user' after role 'tool'",
        source: "mistralai/mistral-common validator.py _validate_message_order before cdd334b (2026-04-27, \"Allow user after tool\")",
    },
    Refusal {
        words: "roles must alternate",
        source: "Hugging Face chat templates (Mistral, Llama 2, Gemma): raise_exception('Conversation roles must alternate user/assistant/user/assistant/...')",
    },
];

/// Whether `message` (a 400's text) refuses the order of the turns.
pub(crate) fn refuses_order(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    ORDER_REFUSALS.iter().any(|r| lower.contains(r.words))
}

/// Whether a request carrying `messages` would end with the assistant's answer (no tool
/// calls waiting for results), so it needs [`CLOSING_TURN`].
pub(crate) fn ends_with_answer(messages: &[Message]) -> bool {
    matches!(
        messages.last(),
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty()
    )
}

/// Model names (after any `vendor/` prefix, lowercase) of the Mistral family, whose
/// validator wants the strict order wherever the model is served (api.mistral.ai, vLLM with
/// `--tokenizer-mode mistral`, LiteLLM); source: docs.mistral.ai/getting-started/models.
const STRICT_PREFIXES: &[&str] = &[
    "mistral",
    "open-mistral",
    "open-mixtral",
    "mixtral",
    "codestral",
    "devstral",
    "magistral",
    "ministral",
    "pixtral",
    "voxtral",
];

/// Whether requests for `model` at `host` are sent in the strict order from the start.
pub(crate) fn strict_from_start(model: &str, host: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    host.eq_ignore_ascii_case("api.mistral.ai")
        || STRICT_PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_servers_words_are_an_order_refusal_and_other_400s_are_not() {
        for words in [
            "This model does not support assistant message prefill. The conversation must end with a user message.",
            "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
            "Expected last role User or Tool (or Assistant with prefix or continue_final_message set to True) for serving but got assistant",
            "Unexpected role 'user' after role 'tool'",
            "Conversation roles must alternate user/assistant/user/assistant/...",
        ] {
            assert!(refuses_order(words), "{words}");
        }
        for words in [
            "prompt is too long: 210000 tokens > 200000 maximum",
            "Unsupported parameter: 'max_tokens'",
            "messages.1: tool_use ids were found without tool_result blocks",
        ] {
            assert!(!refuses_order(words), "{words}");
        }
    }

    #[test]
    fn the_mistral_family_is_strict_wherever_it_is_served() {
        for (model, host) in [
            ("mistral-small-latest", "api.mistral.ai"),
            ("anything", "API.MISTRAL.AI"),
            ("mistralai/Devstral-Small-2507", "127.0.0.1"),
            ("codestral-latest", "proxy.local"),
            ("mistral/magistral-medium-2509", "litellm.local"),
        ] {
            assert!(strict_from_start(model, host), "{model} at {host}");
        }
        for model in ["gpt-4o", "claude-sonnet-4-5", "qwen3-coder", "llama3.1:8b"] {
            assert!(!strict_from_start(model, "127.0.0.1"), "{model}");
        }
    }

    #[test]
    fn only_an_answer_at_the_end_needs_a_closing_turn() {
        let call = crate::conversation::ToolCall {
            id: "c".into(),
            name: "Read".into(),
            arguments: "{}".into(),
        };
        assert!(ends_with_answer(&[
            Message::user("task"),
            Message::assistant("summary", vec![])
        ]));
        assert!(!ends_with_answer(&[Message::user("task")]));
        assert!(!ends_with_answer(&[
            Message::user("task"),
            Message::assistant("", vec![call])
        ]));
        assert!(!ends_with_answer(&[]));
    }
}
