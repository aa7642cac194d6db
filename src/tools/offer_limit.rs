//! The one place that limits how many tools a request offers: some providers refuse a
//! request with more tools than they accept (OpenAI: 128), which would fail every turn. The
//! run trims instead, and says so: built-in tools are always kept, MCP tools are kept in job
//! and server order, and the ones past the limit are named in a warning with how to choose.

use super::ToolRegistry;
use crate::provider::ProviderKind;

/// The most tools one request to `provider` may carry, when the provider has a limit.
pub fn max_tools(provider: ProviderKind) -> Option<usize> {
    provider.family().max_tools
}

/// Keep at most the provider's limit of tools, less `reserve` (tools registered later, such
/// as Subagent). Returns the warning when MCP tools were left out.
pub fn trim(registry: &mut ToolRegistry, provider: ProviderKind, reserve: usize) -> Option<String> {
    let limit = max_tools(provider)?.saturating_sub(reserve);
    let names = registry.names();
    if names.len() <= limit {
        return None;
    }
    let builtin = names.iter().filter(|n| !n.starts_with("mcp__")).count();
    let keep_mcp = limit.saturating_sub(builtin);
    let dropped: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with("mcp__"))
        .skip(keep_mcp)
        .cloned()
        .collect();
    registry.retain(|t| !dropped.iter().any(|d| d == t.name()));
    let provider = serde_json::to_value(provider)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Some(format!(
        "the {provider} provider accepts at most {} tools per request and {} were offered, so {} \
         MCP tools are not offered: {}; exclude the tools the job does not need \
         (permissions.exclude: [\"mcp__server__tool\"]) to choose which ones stay",
        limit + reserve,
        names.len() + reserve,
        dropped.len(),
        dropped.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::conversation::ToolSpec;
    use crate::tools::{Catalogued, Tool, ToolContext, ToolError, ToolOutput};

    struct Named(String);

    impl Catalogued for Named {}

    #[async_trait::async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            &self.0
        }
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: self.0.clone(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object"}),
            }
        }
        async fn run(
            &self,
            _args: serde_json::Value,
            _ctx: &ToolContext,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(String::new()))
        }
    }

    fn registry(builtin: usize, mcp: usize) -> ToolRegistry {
        let mut reg = ToolRegistry::new();
        for i in 0..builtin {
            reg.register(Arc::new(Named(format!("Tool{i}"))));
        }
        for i in 0..mcp {
            reg.register(Arc::new(Named(format!("mcp__s__t{i:03}"))));
        }
        reg
    }

    #[test]
    fn openai_gets_at_most_128_tools_built_ins_first() {
        for (builtin, mcp, reserve, kept_mcp) in [
            (12, 120, 0, 116),
            (12, 116, 0, 116),
            (12, 200, 1, 115),
            (14, 114, 0, 114),
            (12, 117, 0, 116),
        ] {
            let mut reg = registry(builtin, mcp);
            let warning = trim(&mut reg, ProviderKind::Openai, reserve);
            let names = reg.names();
            assert_eq!(names.len(), builtin + kept_mcp, "{builtin}+{mcp}");
            assert_eq!(
                names.iter().filter(|n| !n.starts_with("mcp__")).count(),
                builtin
            );
            assert!(names.contains(&"mcp__s__t000".to_owned()));
            match warning {
                None => assert_eq!(kept_mcp, mcp),
                Some(w) => {
                    assert!(w.contains("at most 128 tools"), "{w}");
                    assert!(w.contains(&format!("mcp__s__t{:03}", mcp - 1)), "{w}");
                    assert!(!w.contains("mcp__s__t000"), "{w}");
                }
            }
        }
    }

    #[test]
    fn providers_without_a_limit_keep_every_tool() {
        for provider in [ProviderKind::Anthropic, ProviderKind::Script] {
            let mut reg = registry(12, 300);
            assert!(trim(&mut reg, provider, 0).is_none());
            assert_eq!(reg.len(), 312);
        }
    }
}
