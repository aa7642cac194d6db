//! Azure OpenAI: OpenAI's API at `{resource}/openai/deployments/{deployment}/…` with an
//! `api-key` header and an `api-version` query.

use std::sync::Arc;

use super::{Accepts, ClientSettings, Family, FamilyError};
use crate::provider::ModelClient;
use crate::provider::openai::{AuthHeader, OpenAiClient, OpenAiConfig, azure_api_base};

pub(super) const FAMILY: Family = Family {
    name: "azure",
    key_env: Some("AZURE_OPENAI_API_KEY"),
    needs_key: false,
    needs_api_base: Some("https://NAME.openai.azure.com"),
    network: true,
    // Azure OpenAI serves OpenAI's API, with its limit.
    max_tools: Some(128),
    accepts: Accepts {
        script: false,
        thinking: false,
        deployment: true,
    },
    default_model: None,
    offline_check: None,
    build,
};

fn build(s: &ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError> {
    let mut connection = s.connection.clone();
    connection.api_base = azure_api_base(
        &s.connection.api_base,
        s.deployment.as_deref().unwrap_or(&s.connection.model),
        s.api_version.as_deref(),
    );
    let config = OpenAiConfig {
        connection,
        stream_usage: s.stream_usage,
        auth: AuthHeader::ApiKey,
    };
    let client = OpenAiClient::new(config).map_err(|e| FamilyError::Client(e.to_string()))?;
    Ok(Arc::new(client))
}
