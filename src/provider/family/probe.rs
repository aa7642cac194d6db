//! A test-only family, added the way the README's "Add a tool, a provider or an output"
//! says (this file and one row in `ProviderKind`): a model that answers every request with
//! "probe heard: " and the last thing the user said. `app::new_provider_tests` follows it
//! from the job file to a finished run.

use std::sync::Arc;

use futures_util::stream;

use super::{Accepts, ClientSettings, Family, FamilyError, OfflineCheck};
use crate::conversation::{Message, Usage};
use crate::provider::{
    ChatRequest, EventStream, FinishReason, ModelClient, ModelInfo, ProviderError, StreamEvent,
};

pub(super) const FAMILY: Family = Family {
    name: "probe",
    key_env: None,
    needs_key: false,
    needs_api_base: None,
    network: false,
    max_tools: None,
    accepts: Accepts {
        script: false,
        thinking: false,
        deployment: false,
    },
    default_model: Some("probe-1"),
    offline_check: Some(OfflineCheck {
        field: "model.name",
        check: |s| match s.connection.model.starts_with("probe-") {
            true => Ok(()),
            false => Err(FamilyError::Usage(format!(
                "the probe family has no model `{}` (its models are probe-N)",
                s.connection.model
            ))),
        },
    }),
    build,
};

fn build(s: &ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError> {
    (FAMILY
        .offline_check
        .as_ref()
        .map_or(Ok(()), |c| (c.check)(s)))?;
    Ok(Arc::new(ProbeClient {
        model: s.connection.model.clone(),
    }))
}

struct ProbeClient {
    model: String,
}

#[async_trait::async_trait]
impl ModelClient for ProbeClient {
    async fn stream(&self, request: &ChatRequest<'_>) -> Result<EventStream, ProviderError> {
        let heard = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { .. } => Some(m.text()),
                _ => None,
            })
            .unwrap_or_default();
        let events = [
            StreamEvent::TextDelta(format!("probe heard: {heard}")),
            StreamEvent::Usage(Usage {
                input_tokens: 7,
                output_tokens: 3,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::Stop),
        ];
        Ok(Box::pin(stream::iter(events.into_iter().map(Ok))))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: FAMILY.name.into(),
            model: self.model.clone(),
        }
    }
}
