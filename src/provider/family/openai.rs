//! Any OpenAI-compatible chat completions endpoint (OpenAI, OpenRouter, Gemini's and
//! Ollama's compatible routes, vLLM, Mistral, …): `Authorization: Bearer`, key optional.

use std::sync::Arc;

use super::{Accepts, ClientSettings, Family, FamilyError};
use crate::provider::ModelClient;
use crate::provider::openai::{AuthHeader, DEFAULT_API_BASE, OpenAiClient, OpenAiConfig};

pub(super) const FAMILY: Family = Family {
    name: "openai",
    key_env: Some("OPENAI_API_KEY"),
    needs_key: false,
    needs_api_base: None,
    network: true,
    // "Invalid 'tools': array too long. Expected an array with maximum length 128".
    max_tools: Some(128),
    accepts: Accepts {
        script: false,
        thinking: false,
        deployment: false,
    },
    default_model: None,
    offline_check: None,
    build,
};

fn build(s: &ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError> {
    let config = OpenAiConfig {
        connection: s.connection_or(DEFAULT_API_BASE),
        stream_usage: s.stream_usage,
        auth: AuthHeader::Bearer,
    };
    let client = OpenAiClient::new(config).map_err(|e| FamilyError::Client(e.to_string()))?;
    Ok(Arc::new(client))
}
