//! Every stop reason a server the README names may send, in one table with its source, and
//! what it means for the run ([`FinishReason`]). A word not in the table is kept as
//! [`FinishReason::Other`]: the loop takes such an answer as final but says so (a warning
//! event), never as a silent success.

use super::FinishReason;

/// What a stop reason means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    ContextWindow,
    Pause,
    Failed,
}

/// One stop word (lowercase), its meaning and where it comes from.
struct Word {
    word: &'static str,
    class: Class,
    #[allow(dead_code)]
    source: &'static str,
}

const OPENAI: &str = "platform.openai.com/docs/api-reference/chat/object (finish_reason)";
const ANTHROPIC: &str = "platform.claude.com/docs/en/build-with-claude/handling-stop-reasons";
const GEMINI: &str = "ai.google.dev/api/generate-content#FinishReason (through proxies)";

const WORDS: &[Word] = &[
    Word {
        word: "stop",
        class: Class::Stop,
        source: OPENAI,
    },
    Word {
        word: "end_turn",
        class: Class::Stop,
        source: ANTHROPIC,
    },
    Word {
        word: "stop_sequence",
        class: Class::Stop,
        source: ANTHROPIC,
    },
    Word {
        word: "eos",
        class: Class::Stop,
        source: "vLLM/TGI servers' end-of-sequence stop",
    },
    Word {
        word: "tool_calls",
        class: Class::ToolCalls,
        source: OPENAI,
    },
    Word {
        word: "function_call",
        class: Class::ToolCalls,
        source: OPENAI,
    },
    Word {
        word: "tool_use",
        class: Class::ToolCalls,
        source: ANTHROPIC,
    },
    Word {
        word: "length",
        class: Class::Length,
        source: OPENAI,
    },
    Word {
        word: "max_tokens",
        class: Class::Length,
        source: ANTHROPIC,
    },
    Word {
        word: "content_filter",
        class: Class::ContentFilter,
        source: "OpenAI; Azure (learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter); DeepSeek",
    },
    Word {
        word: "refusal",
        class: Class::ContentFilter,
        source: ANTHROPIC,
    },
    Word {
        word: "safety",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "recitation",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "prohibited_content",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "blocklist",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "spii",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "image_safety",
        class: Class::ContentFilter,
        source: GEMINI,
    },
    Word {
        word: "model_context_window_exceeded",
        class: Class::ContextWindow,
        source: ANTHROPIC,
    },
    Word {
        word: "model_length",
        class: Class::ContextWindow,
        source: "docs.mistral.ai/api (finish_reason: the model's context length was reached)",
    },
    Word {
        word: "pause_turn",
        class: Class::Pause,
        source: ANTHROPIC,
    },
    Word {
        word: "error",
        class: Class::Failed,
        source: "docs.mistral.ai/api; openrouter.ai/docs/api-reference/overview (finish_reason \"error\")",
    },
    Word {
        word: "abort",
        class: Class::Failed,
        source: "vllm/v1/engine (FinishReason.ABORT, the request was aborted by the engine)",
    },
    Word {
        word: "insufficient_system_resource",
        class: Class::Failed,
        source: "api-docs.deepseek.com/api/create-chat-completion (finish_reason)",
    },
    Word {
        word: "malformed_function_call",
        class: Class::Failed,
        source: GEMINI,
    },
];

/// A server's stop word in cn-run's terms.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    let lower = reason.trim().to_ascii_lowercase();
    let word = reason.trim().to_owned();
    match WORDS.iter().find(|w| w.word == lower).map(|w| w.class) {
        Some(Class::Stop) => FinishReason::Stop,
        Some(Class::ToolCalls) => FinishReason::ToolCalls,
        Some(Class::Length) => FinishReason::Length,
        Some(Class::ContentFilter) => FinishReason::ContentFilter(word),
        Some(Class::ContextWindow) => FinishReason::ContextWindow(word),
        Some(Class::Pause) => FinishReason::Pause,
        Some(Class::Failed) => FinishReason::Failed(word),
        None => FinishReason::Other(word),
    }
}

#[cfg(test)]
mod tests {
    use super::{WORDS, finish_reason};
    use crate::provider::FinishReason;

    #[test]
    fn every_word_of_the_table_has_an_outcome_other_than_unknown() {
        for w in WORDS {
            assert!(
                !matches!(finish_reason(w.word), FinishReason::Other(_)),
                "{}",
                w.word
            );
            // Servers vary the case (Gemini's MAX_TOKENS, SAFETY through proxies).
            assert_eq!(
                std::mem::discriminant(&finish_reason(&w.word.to_ascii_uppercase())),
                std::mem::discriminant(&finish_reason(w.word)),
                "{}",
                w.word
            );
        }
    }

    #[test]
    fn the_classes_keep_the_servers_word() {
        assert_eq!(finish_reason("end_turn"), FinishReason::Stop);
        assert_eq!(finish_reason("max_tokens"), FinishReason::Length);
        assert_eq!(
            finish_reason("refusal"),
            FinishReason::ContentFilter("refusal".into())
        );
        assert_eq!(finish_reason("SAFETY").as_str(), "content_filter");
        assert_eq!(
            finish_reason("model_context_window_exceeded"),
            FinishReason::ContextWindow("model_context_window_exceeded".into())
        );
        assert_eq!(finish_reason("pause_turn"), FinishReason::Pause);
        assert_eq!(finish_reason("abort"), FinishReason::Failed("abort".into()));
        assert_eq!(
            finish_reason("stopped_by_alien"),
            FinishReason::Other("stopped_by_alien".into())
        );
    }
}
