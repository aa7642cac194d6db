//! The words each server uses to say a request does not fit its context window, in one table
//! with the source of each phrase. A refusal in these words is a context overflow: the run
//! compacts its history and asks again, instead of failing as a bad request.
//!
//! The phrases are matched lowercase, anywhere in the error's type, code and message. Each is
//! specific to an overflow (a bare "tokens" or "too long" is not), so a refused parameter or
//! a rate limit is never taken for one; `tests/fixtures/servers/*/error_overflow*.json` hold
//! the bodies the conformance suite replays.

/// One phrase, the server that writes it and where the words come from.
struct Phrase {
    words: &'static str,
    #[allow(dead_code)]
    server: &'static str,
    #[allow(dead_code)]
    source: &'static str,
}

const PHRASES: &[Phrase] = &[
    Phrase {
        words: "exceed_context_size_error",
        server: "llama.cpp",
        source: "ggml-org/llama.cpp tools/server/server-common.cpp format_error_response (ERROR_TYPE_EXCEED_CONTEXT_SIZE)",
    },
    Phrase {
        words: "exceeds the available context size",
        server: "llama.cpp",
        source: "ggml-org/llama.cpp tools/server/server.cpp (\"the request exceeds the available context size, try increasing it\"), server-context.cpp (\"request (N tokens) exceeds the available context size (M tokens)\")",
    },
    Phrase {
        words: "is larger than the max context size",
        server: "llama.cpp",
        source: "ggml-org/llama.cpp tools/server/server-context.cpp (\"input (N tokens) is larger than the max context size (M tokens). skipping\")",
    },
    Phrase {
        words: "the input token count",
        server: "Gemini",
        source: "Gemini API 400 INVALID_ARGUMENT \"The input token count (N) exceeds the maximum number of tokens allowed (M).\" (google-gemini/gemini-cli issues 4118, 6678)",
    },
    Phrase {
        words: "exceeds the maximum number of tokens allowed",
        server: "Gemini",
        source: "Gemini API, the same message",
    },
    Phrase {
        words: "maximum context length",
        server: "OpenAI, Azure, vLLM, DeepSeek, OpenRouter, Mistral",
        source: "OpenAI/Azure context_length_exceeded (\"This model's maximum context length is N tokens\"); vllm/renderers/params.py; DeepSeek and OpenRouter (\"This endpoint's maximum context length is N tokens\") error pages; Mistral \"too large for model with N maximum context length\"",
    },
    Phrase {
        words: "context_length_exceeded",
        server: "OpenAI, Azure, Groq",
        source: "platform.openai.com/docs/guides/error-codes; console.groq.com/docs/errors",
    },
    Phrase {
        words: "context length",
        server: "vLLM, Ollama, LM Studio",
        source: "vllm/renderers/params.py _token_len_check (\"the model's context length is only N tokens\"); ollama llm/llama_server.go (\"the prompt is longer than the context length currently available to the model\"), server/routes.go (\"the input length exceeds the context length\"); LM Studio (\"the model is loaded with context length of only N tokens\")",
    },
    Phrase {
        words: "context window",
        server: "OpenAI",
        source: "OpenAI \"Your input exceeds the context window of this model\"",
    },
    Phrase {
        words: "reduce the length of the messages",
        server: "OpenAI, DeepSeek, Groq, vLLM",
        source: "\"Please reduce the length of the messages or completion.\" (OpenAI, DeepSeek api-docs.deepseek.com/quick_start/error_codes, Groq)",
    },
    Phrase {
        words: "prompt is too long",
        server: "Anthropic",
        source: "Anthropic invalid_request_error \"prompt is too long: N tokens > M maximum\" (docs.anthropic.com/en/api/errors)",
    },
    Phrase {
        words: "exceed context limit",
        server: "Anthropic",
        source: "Anthropic \"input length and `max_tokens` exceed context limit: N + M > L\"",
    },
    Phrase {
        words: "request_too_large",
        server: "Anthropic",
        source: "Anthropic 413 request_too_large (docs.anthropic.com/en/api/errors)",
    },
    Phrase {
        words: "request too large",
        server: "Groq",
        source: "Groq 413 \"Request too large for model … please reduce your message size\" (console.groq.com/docs/errors)",
    },
    Phrase {
        words: "range of input length should be",
        server: "Qwen (DashScope)",
        source: "Alibaba Model Studio error codes: InvalidParameter \"Range of input length should be [1, N]\" (help.aliyun.com/zh/model-studio/error-code)",
    },
    Phrase {
        words: "maximum prompt length",
        server: "xAI",
        source: "xAI \"This model's maximum prompt length is N but the request contains M tokens.\"",
    },
    Phrase {
        words: "exceeded model token limit",
        server: "Moonshot (Kimi)",
        source: "Moonshot \"Your request exceeded model token limit: N (requested: M)\"",
    },
    Phrase {
        words: "too many tokens",
        server: "generic",
        source: "servers that say only \"too many tokens\"",
    },
    Phrase {
        words: "input is too long",
        server: "Amazon Bedrock",
        source: "Bedrock ValidationException \"Input is too long for requested model\"",
    },
    Phrase {
        words: "prompt too long",
        server: "Ollama (older)",
        source: "ollama \"prompt too long; exceeded max context length by N tokens\"",
    },
];

/// Whether `text` (the error's type, code and message) says the request does not fit.
pub(crate) fn is_overflow(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    PHRASES.iter().any(|p| lower.contains(p.words))
}

#[cfg(test)]
mod tests {
    use super::is_overflow;

    #[test]
    fn each_servers_overflow_words_are_recognised() {
        for words in [
            "the request exceeds the available context size, try increasing it",
            "request (9001 tokens) exceeds the available context size (8192 tokens), try increasing it",
            "input (9001 tokens) is larger than the max context size (8192 tokens). skipping",
            "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
            "You passed 9000 input tokens and requested 1024 output tokens. However, the model's context length is only 8192 tokens, resulting in a maximum input length of 7168 tokens.",
            "the prompt is longer than the context length currently available to the model; shorten the prompt",
            "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
            "Prompt contains 300000 tokens, too large for model with 131072 maximum context length",
            "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]",
            "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000",
            "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
        ] {
            assert!(is_overflow(words), "{words}");
        }
    }

    #[test]
    fn other_refusals_are_not_overflows() {
        for words in [
            "Unsupported parameter: 'max_tokens' is not supported with this model.",
            "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000. Please try again in 2.5s.",
            "This model does not support assistant message prefill.",
            "Invalid API key",
            "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens",
        ] {
            assert!(!is_overflow(words), "{words}");
        }
    }
}
