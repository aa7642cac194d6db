//! Anthropic's Messages API: `x-api-key` (always needed), extended thinking.

use std::sync::Arc;

use super::{Accepts, ClientSettings, Family, FamilyError};
use crate::provider::ModelClient;
use crate::provider::anthropic::{AnthropicClient, AnthropicConfig, DEFAULT_API_BASE};

pub(super) const FAMILY: Family = Family {
    name: "anthropic",
    key_env: Some("ANTHROPIC_API_KEY"),
    needs_key: true,
    needs_api_base: None,
    network: true,
    max_tools: None,
    accepts: Accepts {
        script: false,
        thinking: true,
        deployment: false,
    },
    default_model: None,
    offline_check: None,
    build,
};

fn build(s: &ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError> {
    if s.connection.api_key.is_none() {
        return Err(FamilyError::Usage(
            "provider `anthropic` needs an API key: set ANTHROPIC_API_KEY or model.api_key_env"
                .to_owned(),
        ));
    }
    let config = AnthropicConfig {
        connection: s.connection_or(DEFAULT_API_BASE),
        thinking_budget: s.thinking_budget,
    };
    let client = AnthropicClient::new(config).map_err(|e| FamilyError::Client(e.to_string()))?;
    Ok(Arc::new(client))
}
