//! Scripted turns from a file: no key, no network, no cost (tests, demos, dry runs).

use std::sync::Arc;

use super::{Accepts, ClientSettings, Family, FamilyError, OfflineCheck};
use crate::provider::ModelClient;
use crate::provider::script::ScriptClient;

pub(super) const FAMILY: Family = Family {
    name: "script",
    key_env: None,
    needs_key: false,
    needs_api_base: None,
    network: false,
    max_tools: None,
    accepts: Accepts {
        script: true,
        thinking: false,
        deployment: false,
    },
    default_model: Some("script"),
    offline_check: Some(OfflineCheck {
        field: "model.script",
        check: |s| build(s).map(drop),
    }),
    build,
};

fn build(s: &ClientSettings) -> Result<Arc<dyn ModelClient>, FamilyError> {
    let path = s
        .script
        .as_ref()
        .ok_or_else(|| FamilyError::Usage("provider `script` needs a script file".into()))?;
    let client = ScriptClient::from_file(path, s.connection.model.clone())
        .map_err(|e| FamilyError::Usage(e.to_string()))?;
    Ok(Arc::new(client))
}
