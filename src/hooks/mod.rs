//! Hooks with Claude Code's protocol: a team's own commands run at points of the run
//! (before and after each tool call, when the task is submitted, when the agent wants to
//! stop, at the start and end, before compaction, when a call needs approval), read the
//! event as JSON on stdin and answer with an exit code and optional JSON — so hook scripts
//! written for Claude Code run unchanged.
//!
//! Hooks never widen the policy ([`gate`]): a PreToolUse `allow` answers an ask, never an
//! exclude. They run contained as checks do ([`run`]), bounded by their timeout and the
//! run's stop; a hook that hangs or crashes is a named failure (`hook.ran` events). A
//! repository's hooks (`.claude/` and `.continue/` settings files, [`settings`]) are read
//! only in trusted mode and when the job opts in.

pub mod config;
mod fire;
pub mod gate;
pub mod input;
pub mod matcher;
pub mod names;
pub mod output;
pub mod points;
pub mod run;
pub mod settings;

pub use config::{HookDef, HookEvent, HookOrigin, HooksSection};
pub use gate::{Approval, Gated, HookAnswer, approved, combine};

use std::collections::BTreeMap;

/// The run's hooks and the answers people gave to deferred calls; cheap to share with
/// nested agents.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    defs: Vec<(HookDef, matcher::Matcher)>,
    /// Where hooks run and what their input says about the run (`None`: no hooks).
    at: Option<(input::Common, run::Place)>,
    /// Stop hooks of a nested agent fire as SubagentStop.
    nested: bool,
    /// Answers to deferred calls, by call id (`--approve`, `--deny`).
    approvals: BTreeMap<String, Approval>,
}

impl Hooks {
    /// Hooks from `defs` (a malformed matcher is an error naming it), run at `place`.
    pub fn new(
        defs: Vec<HookDef>,
        common: input::Common,
        place: run::Place,
    ) -> Result<Hooks, String> {
        let defs = defs
            .into_iter()
            .map(|d| {
                let m = matcher::Matcher::new(d.matcher.as_deref())
                    .map_err(|e| format!("hooks.{}: {e}", d.event.as_str()))?;
                Ok((d, m))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Hooks {
            defs,
            at: Some((common, place)),
            nested: false,
            approvals: BTreeMap::new(),
        })
    }

    /// The same hooks and approvals for a nested agent.
    pub fn nested(&self) -> Hooks {
        Hooks {
            nested: true,
            ..self.clone()
        }
    }

    /// Adds people's answers to deferred calls.
    pub fn with_approvals(mut self, approvals: BTreeMap<String, Approval>) -> Hooks {
        self.approvals = approvals;
        self
    }

    /// A person's answer to the call `call_id`, if one was given.
    pub fn approval(&self, call_id: &str) -> Option<&Approval> {
        self.approvals.get(call_id)
    }

    /// Whether these are a nested agent's hooks (nothing of it can wait for a person).
    pub fn is_nested(&self) -> bool {
        self.nested
    }

    /// Whether any hook is set for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.defs.iter().any(|(d, _)| d.event == event)
    }
}
