//! The job `-p PROMPT` runs: no file, everything from the flags (made before the
//! configuration is resolved, like a job loaded from a file).

use crate::config::Settings;
use crate::job::{self, Job, LoadOptions, ProviderKind};
use crate::run::start_error::RunError;

/// The job for `-p PROMPT`: no file, everything from flags.
pub(crate) fn adhoc_job(flags: &Settings, prompt: &str) -> Result<Job, RunError> {
    let provider =
        (flags.provider).unwrap_or_else(|| ProviderKind::for_prompt(flags.script.is_some()));
    let family = provider.family();
    let name = match (&flags.model, family.default_model) {
        (Some(m), _) => m.clone(),
        (None, Some(default)) => default.to_owned(),
        (None, None) => {
            return Err(RunError::Usage(
                "-p needs --model NAME (or --provider script --script FILE)".to_owned(),
            ));
        }
    };
    let mut model = serde_json::json!({"provider": provider, "name": name});
    if let Some(script) = &flags.script {
        model["script"] = serde_json::Value::String(script.display().to_string());
    }
    let raw: job::JobFile =
        serde_json::from_value(serde_json::json!({"name": "adhoc", "prompt": "-", "model": model}))
            .map_err(|e| RunError::Usage(e.to_string()))?;
    let mut job = job::load_raw(raw, "<command line>", &LoadOptions::default())?;
    job.prompt = (prompt != "-").then(|| prompt.to_owned());
    Ok(job)
}
