//! The family table's decisions, one model or message at a time.

use super::{
    Param, anthropic_ceiling, anthropic_max_tokens, ceiling_in_error, openai_params, rejected_param,
};

#[test]
fn openai_reasoning_models_get_max_completion_tokens_and_no_sampling() {
    for model in [
        "o1",
        "o1-mini",
        "o3",
        "o3-mini-2025-01-31",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5.1-codex",
        "openai/o3",
        "GPT-5-nano",
    ] {
        let p = openai_params(model, "https://api.openai.com/v1", true);
        assert!(p.max_completion_tokens && !p.sampling, "{model}");
    }
    for model in [
        "gpt-4o",
        "gpt-4.1-mini",
        "gpt-5-chat-latest",
        "qwen3-coder",
        "deepseek-chat",
        "llama3.1:8b",
        "mistral-large-latest",
        "gemini-2.5-flash",
    ] {
        let p = openai_params(model, "http://127.0.0.1:8080/v1", true);
        assert!(!p.max_completion_tokens && p.sampling, "{model}");
    }
}

#[test]
fn stream_options_follow_the_setting_and_the_host() {
    assert!(openai_params("gpt-4o", "https://api.openai.com/v1", true).stream_options);
    assert!(!openai_params("gpt-4o", "https://api.openai.com/v1", false).stream_options);
    for base in [
        "https://api.mistral.ai/v1",
        "https://API.MISTRAL.AI/v1/",
        "https://user@api.mistral.ai/v1",
    ] {
        assert!(
            !openai_params("mistral-small-latest", base, true).stream_options,
            "{base}"
        );
    }
    assert!(openai_params("mistral", "http://localhost:11434/v1", true).stream_options);
}

#[test]
fn anthropic_max_tokens_respects_the_ceiling_the_job_and_the_thinking_budget() {
    assert_eq!(anthropic_ceiling("claude-3-haiku-20240307"), Some(4096));
    assert_eq!(anthropic_ceiling("claude-3-5-haiku-latest"), Some(8192));
    assert_eq!(anthropic_ceiling("claude-opus-4-1-20250805"), Some(32000));
    assert_eq!(anthropic_ceiling("claude-opus-4-5"), Some(64000));
    assert_eq!(anthropic_ceiling("some-proxy-model"), None);
    assert_eq!(
        anthropic_max_tokens("claude-3-haiku-20240307", None, None),
        4096
    );
    assert_eq!(anthropic_max_tokens("claude-sonnet-4-5", None, None), 8192);
    assert_eq!(
        anthropic_max_tokens("claude-sonnet-4-5", Some(1000), None),
        1000
    );
    assert_eq!(
        anthropic_max_tokens("claude-sonnet-4-5", None, Some(10_000)),
        18_192
    );
    assert_eq!(anthropic_max_tokens("unknown", None, None), 8192);
}

#[test]
fn the_ceiling_named_in_an_error_is_read() {
    assert_eq!(
        ceiling_in_error(
            "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for claude-3-haiku-20240307"
        ),
        Some(4096)
    );
    assert_eq!(
        ceiling_in_error("max_tokens: 100000 > 64000, which is the maximum allowed"),
        Some(64000)
    );
    assert_eq!(
        ceiling_in_error("prompt is too long: 210000 > 200000"),
        None
    );
    assert_eq!(ceiling_in_error("overloaded"), None);
}

#[test]
fn a_parameter_refused_by_name_is_found_and_other_errors_are_not() {
    let sent = [Param::StreamOptions, Param::Temperature, Param::MaxTokens];
    let cases = [
        (
            "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]",
            Some(Param::StreamOptions),
        ),
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            Some(Param::MaxTokens),
        ),
        (
            "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.",
            Some(Param::Temperature),
        ),
        (
            "Unrecognized request argument supplied: stream_options",
            Some(Param::StreamOptions),
        ),
        ("max_tokens is too large: 9000", None),
        ("Invalid API key", None),
        ("temperature must be between 0 and 2", None),
    ];
    for (message, want) in cases {
        assert_eq!(rejected_param(message, &sent), want, "{message}");
    }
    assert_eq!(
        rejected_param(
            "Unrecognized request argument supplied: max_completion_tokens",
            &[Param::MaxCompletionTokens]
        ),
        Some(Param::MaxCompletionTokens)
    );
}
