//! Step 7 of a run: announce it — the events that open a run (its start, MCP servers,
//! warnings, the rules that always apply), after which the agent loop may begin.

use std::sync::Arc;

use super::guard::Guard;
use super::place::Placed;
use super::session_hooks::SessionHooks;
use super::tools::Tools;
use crate::agent::RunState;
use crate::config::RunConfig;
use crate::events::{Emitter, Event};
use crate::provider::ModelClient;

/// A run about to start, as `announce` tells it.
pub(crate) struct Start<'a> {
    pub placed: &'a Placed,
    pub tools: &'a Tools,
    pub client: &'a dyn ModelClient,
    pub state: &'a RunState,
    pub isolation: Option<&'a str>,
}

/// The events that open a run: its start, MCP servers, warnings and the rules that always
/// apply. Returns why the run must end at once (the sandbox it requires is not there).
pub(crate) fn announce(
    config: &RunConfig,
    start: &Start<'_>,
    guard: &mut Guard,
    hooks: &SessionHooks,
    emitter: &Arc<Emitter>,
) -> Option<String> {
    let info = start.client.info();
    let first = start.state.history.first().map(|m| m.text().to_owned());
    emitter.emit(Event::RunStarted {
        job: config.job().name.clone(),
        prompt: first.unwrap_or_default(),
        provider: info.provider,
        model: info.model,
        workspace: start.placed.workspace.display().to_string(),
        tools: start.tools.registry.names(),
        mode: start.tools.policy.mode().as_str().to_owned(),
        resumed: start.placed.resumed,
        continues: start.placed.resumed && start.state.follow_up.is_none(),
        output_dir: start.placed.out_dir.display().to_string(),
        session_path: Some(hooks.path.display().to_string()),
        checks: config.job().checks.iter().map(|c| c.name.clone()).collect(),
        isolation: start.isolation.map(str::to_owned),
        sandbox: Some(Box::new(guard.sandbox.status().clone())),
        policy: start.tools.policy.table(),
        report_path: config
            .html()
            .then(|| start.placed.out_dir.join(crate::report::html::FILE_NAME))
            .map(|p| p.display().to_string()),
        trace_id: start
            .placed
            .trace
            .as_ref()
            .map(crate::telemetry::RunTrace::trace_hex),
    });
    // The sandbox got before now (set up on its own thread) is told from here on.
    guard.sandbox.announced();
    // The configuration in force (a resume's flags laid over the first run's) and the
    // messages the run starts with.
    let view = serde_json::to_value(config.view()).unwrap_or_default();
    hooks.announce(start.state, view);
    super::extensions::report_mcp(&start.tools.statuses, emitter);
    if let Some(hub) = &start.tools.hub {
        hub.record_notifications(emitter.clone());
    }
    for message in std::mem::take(&mut guard.warnings) {
        emitter.emit(Event::Warning { message });
    }
    for r in guard
        .rules
        .iter()
        .filter(|r| matches!(r.applies, crate::rules::Applies::Always))
    {
        emitter.emit(Event::RuleApplied {
            turn: 0,
            name: r.name.clone(),
            origin: r.origin.clone(),
            reason: "always applies".to_owned(),
        });
    }
    match &guard.sandbox_verdict {
        Ok(Some(warning)) => {
            emitter.emit(Event::Warning {
                message: warning.clone(),
            });
            None
        }
        Ok(None) => None,
        Err(refused) => Some(refused.to_string()),
    }
}
