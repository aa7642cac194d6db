//! Fires one event: the hooks whose matcher fits run side by side (the same command once),
//! each answer is read and told as a `hook.ran` event, and the answers are combined —
//! the strictest decision wins (block > defer > ask > allow), context adds up.

use futures_util::future::join_all;
use serde_json::{Map, Value};

use super::Hooks;
use super::config::{HookDef, HookEvent};
use super::gate::HookAnswer;
use super::output::{HookDecision, Verdict, interpret};
use super::run::run_hook;
use crate::events::{Emitter, Event};

/// Characters of a hook's command named in events and decisions.
const COMMAND_CHARS: usize = 120;

impl Hooks {
    /// Runs the hooks of `event` whose matcher fits one of `subject` (`None`: the event
    /// has no matcher subject, every hook of it runs) with `fields` as the event's input.
    pub(super) async fn fire(
        &self,
        event: HookEvent,
        subject: Option<&[&str]>,
        fields: Map<String, Value>,
        call_id: Option<&str>,
        emitter: &Emitter,
    ) -> HookAnswer {
        let Some((common, place)) = &self.at else {
            return HookAnswer::default();
        };
        let event = match event {
            HookEvent::Stop if self.nested => HookEvent::SubagentStop,
            e => e,
        };
        let mut chosen: Vec<&HookDef> = Vec::new();
        for (def, m) in &self.defs {
            let fits = subject.is_none_or(|names| m.matches(names));
            if def.event == event && fits && !chosen.iter().any(|c| c.command == def.command) {
                chosen.push(def);
            }
        }
        if chosen.is_empty() {
            return HookAnswer::default();
        }
        let input = common.input(event, fields);
        let runs = chosen.iter().map(|def| async {
            let ran = run_hook(&def.command.command, &input, def.command.timeout(), place).await;
            let verdict = interpret(
                event,
                ran.exit_code,
                ran.failure.clone(),
                &ran.stdout,
                &ran.stderr,
            );
            emitter.emit(Event::HookRan {
                hook_event: event,
                command: short(&def.command.command),
                origin: def.origin,
                call_id: call_id.map(str::to_owned),
                exit_code: ran.exit_code,
                decision: verdict.said,
                reason: verdict.reason.clone(),
                failure: verdict
                    .failure
                    .as_ref()
                    .map(|f| format!("{}: {}", f.kind(), f.describe())),
                stderr: (!ran.stderr.is_empty()).then(|| ran.stderr.clone()),
                duration_ms: ran.duration_ms,
            });
            if let Some(f) = &verdict.failure {
                tracing::warn!(
                    "{} hook `{}` {}",
                    event.as_str(),
                    short(&def.command.command),
                    f.describe()
                );
            }
            (*def, verdict)
        });
        combine_all(event, join_all(runs).await)
    }
}

/// The answers of several hooks as one.
fn combine_all(event: HookEvent, answers: Vec<(&HookDef, Verdict)>) -> HookAnswer {
    let mut all = HookAnswer::default();
    for (def, v) in answers {
        if v.said != HookDecision::Nothing && all.said.is_none_or(|s| v.said > s) {
            all.said = Some(v.said);
            all.rule = Some(format!(
                "{} hook `{}`",
                event.as_str(),
                short(&def.command.command)
            ));
            all.reason = v.reason.clone();
        }
        if v.updated_input.is_some() {
            all.updated_input = v.updated_input;
        }
        all.context.extend(v.context);
        if all.stop.is_none() {
            all.stop = v.stop;
        }
    }
    all
}

/// A command as events name it: its first line, cut.
fn short(command: &str) -> String {
    let line = command.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(COMMAND_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}
