//! What strict servers refuse in a request's turns, checked the way each server checks it, so a
//! replay answers a bad request with the server's own refusal instead of accepting anything:
//!
//! - Mistral: mistralai/mistral-common `src/mistral_common/protocol/instruct/validator.py`
//!   (`_validate_message_order`, as before cdd334b "Allow user after tool", 2026-04-27, which
//!   many deployments still serve; `_validate_last_message`; `_validate_tool_calls_followed_by_
//!   tool_messages`);
//! - Anthropic: the Messages API as Claude Opus 4.6+ serves it (no assistant prefill; every
//!   `tool_use` answered by a `tool_result` in the next message: docs.anthropic.com, tool use);
//! - OpenAI-compatible servers: OpenAI's own checks ("messages with role 'tool' must be a
//!   response to a preceeding message with 'tool_calls'"; every call answered), and a last
//!   assistant turn, which llama.cpp and vLLM chat templates read as a prefill to continue.

use serde_json::Value;

fn role(m: &Value) -> &str {
    m["role"].as_str().unwrap_or_default()
}

/// The refusal file (`tests/fixtures/servers/mistral/…`) Mistral answers `body` with.
pub fn mistral_refusal(body: &Value) -> Option<&'static str> {
    let messages = body["messages"].as_array()?;
    let mut previous: Option<&str> = None;
    let mut pending = 0usize;
    for m in messages {
        let current = role(m);
        if let Some(prev) = previous {
            let allowed: &[&str] = match prev {
                "system" => &["user", "assistant", "system"],
                "user" => &["assistant", "system", "user"],
                "assistant" => &["assistant", "user", "tool"],
                _ => &["assistant", "tool"],
            };
            if !allowed.contains(&current) {
                return Some("error_order_after_tool.http");
            }
        }
        match current {
            "tool" => pending = pending.saturating_sub(1),
            "assistant" => {
                if pending != 0 {
                    return Some("error_order_after_tool.http");
                }
                pending = m["tool_calls"].as_array().map_or(0, Vec::len);
            }
            _ => {}
        }
        previous = Some(current);
    }
    (!matches!(previous, Some("user" | "tool"))).then_some("error_order_last.http")
}

/// The refusal file (`tests/fixtures/servers/anthropic/…`) or words Anthropic answers with.
pub fn anthropic_refusal(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    if messages.last().is_none_or(|m| role(m) != "user") {
        return Some("error_prefill.http".into());
    }
    for (n, m) in messages.iter().enumerate() {
        let uses: Vec<&str> = m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str())
            .collect();
        let next = messages.get(n + 1);
        let answered = |id: &str| {
            next.and_then(|m| m["content"].as_array())
                .is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
                })
        };
        if let Some(id) = uses.iter().find(|id| !answered(id)) {
            return Some(format!(
                "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {id}"
            ));
        }
    }
    None
}

/// What an OpenAI-compatible server refuses (or reads as a prefill) in `body`.
pub fn openai_problem(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    let mut pending: Vec<String> = Vec::new();
    for m in messages {
        match role(m) {
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or_default();
                let Some(i) = pending.iter().position(|p| p == id) else {
                    return Some(format!(
                        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls' ({id})"
                    ));
                };
                pending.remove(i);
            }
            _ if !pending.is_empty() => {
                return Some(format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    pending.join(", ")
                ));
            }
            "assistant" => {
                pending = m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["id"].as_str().map(str::to_owned))
                    .collect();
            }
            _ => {}
        }
    }
    match messages.last() {
        Some(m) if role(m) == "assistant" && m["tool_calls"].is_null() => {
            Some("the request ends with the assistant's turn (read as a prefill)".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_servers_rules_catch_what_the_server_refuses() {
        let summary_last = json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "summary"}]});
        assert_eq!(
            mistral_refusal(&summary_last),
            Some("error_order_last.http")
        );
        assert!(openai_problem(&summary_last).is_some());
        let user_after_tool = json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": {}}]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "user", "content": "more"}]});
        assert_eq!(
            mistral_refusal(&user_after_tool),
            Some("error_order_after_tool.http")
        );
        assert!(openai_problem(&user_after_tool).is_none());
        let fine = json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": {}}]},
            {"role": "tool", "tool_call_id": "a", "content": "x"}]});
        assert_eq!(mistral_refusal(&fine), None);
        assert_eq!(openai_problem(&fine), None);
        let prefill = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "task"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "summary"}]}]});
        assert_eq!(
            anthropic_refusal(&prefill).as_deref(),
            Some("error_prefill.http")
        );
    }
}
