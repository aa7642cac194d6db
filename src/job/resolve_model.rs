//! The job's `model:` section resolved: provider, name, endpoint, key, script, limits
//! and the family's extras (thinking, Azure), for [`super::resolve`].

use super::ModelSpec;
use super::file::JobFile;
use super::resolve::Ctx;
use crate::provider::Family;

pub(super) fn model(cx: &mut Ctx<'_>, raw: &JobFile) -> ModelSpec {
    let m = &raw.model;
    let script = m.script.as_ref().map(|s| cx.base.join(s));
    let family = m.provider.family();
    match (family.accepts.script, &script) {
        (true, None) => {
            cx.push(
                "model.provider",
                format!("provider `{}` needs `model.script: FILE`", family.name),
            );
        }
        (true, Some(p)) if !p.is_file() => {
            cx.push(
                "model.script",
                format!("script file not found: {}", p.display()),
            );
        }
        (false, Some(_)) => {
            let only = Family::accepting(|a| a.script);
            cx.push("model.script", format!("`script` is only for {only}"));
        }
        _ => {}
    }
    if let Some(env) = &m.api_key_env
        && (env.is_empty() || env.contains(['=', ' ', '$']))
    {
        cx.push(
            "model.api_key_env",
            "must be the NAME of an environment variable".to_owned(),
        );
    }
    if let Some(base) = &m.api_base
        && !(base.starts_with("http://") || base.starts_with("https://"))
    {
        cx.push(
            "model.api_base",
            "must be an http:// or https:// URL".to_owned(),
        );
    }
    check_model_extras(cx, m);
    let retry = m.retry.as_ref();
    ModelSpec {
        provider: m.provider,
        name: m.name.clone(),
        api_base: m.api_base.clone(),
        api_key_env: m.api_key_env.clone(),
        context_length: m.context_length,
        max_tokens: m.max_tokens,
        temperature: m.temperature,
        script,
        headers: m
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        max_retries: retry.and_then(|r| r.max_retries),
        initial_retry_delay: cx.duration(
            "model.retry.initial_delay",
            retry.and_then(|r| r.initial_delay.as_ref()),
        ),
        idle_timeout: cx.duration("model.idle_timeout", m.idle_timeout.as_ref()),
        request_timeout: cx.duration("model.request_timeout", m.request_timeout.as_ref()),
        tool_call_format: m.tool_call_format.unwrap_or_default(),
        pricing: m.pricing,
        stream_usage: m.stream_usage.unwrap_or(true),
        thinking_budget: m
            .thinking
            .filter(|t| t.kind != Some(crate::job::file::ThinkingKind::Disabled))
            .map(|t| t.budget_tokens),
        deployment: m.deployment.clone(),
        api_version: m.api_version.clone(),
    }
}

/// The rules for thinking and Azure settings (docs.anthropic.com, "Extended thinking":
/// `budget_tokens` ≥ 1024 and below `max_tokens`).
fn check_model_extras(cx: &mut Ctx<'_>, m: &crate::job::file::ModelSection) {
    if let Some(t) = m
        .thinking
        .as_ref()
        .filter(|t| t.kind != Some(crate::job::file::ThinkingKind::Disabled))
    {
        if !m.provider.family().accepts.thinking {
            let only = Family::accepting(|a| a.thinking);
            cx.push("model.thinking", format!("is only for {only}"));
        }
        if t.budget_tokens < 1024 {
            cx.push(
                "model.thinking.budget_tokens",
                "must be at least 1024".to_owned(),
            );
        }
        if let Some(max) = m.max_tokens
            && max <= t.budget_tokens
        {
            cx.push(
                "model.max_tokens",
                format!("must be above thinking.budget_tokens ({})", t.budget_tokens),
            );
        }
    }
    let family = m.provider.family();
    if let (Some(example), None) = (family.needs_api_base, &m.api_base) {
        cx.push(
            "model.api_base",
            format!(
                "`provider: {}` needs the resource URL, e.g. {example}",
                family.name
            ),
        );
    }
    for (field, set) in [
        ("model.deployment", m.deployment.is_some()),
        ("model.api_version", m.api_version.is_some()),
    ] {
        if set && !family.accepts.deployment {
            let only = Family::accepting(|a| a.deployment);
            cx.push(field, format!("is only for {only}"));
        }
    }
}
