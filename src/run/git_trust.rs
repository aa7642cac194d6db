//! The run's own `.git` record (`git_guard`) as the composition root uses it: taken when
//! a new run starts and kept in its folder; read back and applied when a resume starts
//! (so a `.git` planted before a crash redirects nothing the resume does); applied again
//! when the run ends, each restored path said as a warning (stderr, the event stream and
//! result.json's `warnings`).

use std::path::Path;

use crate::events::{Emitter, Event};
use crate::git_guard::GitGuard;

/// The record for a run in `workspace` with folder `out_dir`, and what a resume had to
/// put back already (as warnings).
pub(crate) fn start(
    workspace: &Path,
    out_dir: &Path,
    resumed: bool,
) -> (Option<GitGuard>, Vec<String>) {
    if resumed && let Some(guard) = GitGuard::load(out_dir) {
        let said = words(&guard.restore(), "before this resume");
        return (Some(guard), said);
    }
    (GitGuard::take(workspace), Vec::new())
}

/// Keeps a new run's record in its folder (once the run is sure to start: a run that
/// cannot leaves no folder behind).
pub(crate) fn keep(guard: Option<&GitGuard>, out_dir: &Path, resumed: bool) -> Option<String> {
    let guard = guard.filter(|_| !resumed)?;
    guard
        .save(out_dir)
        .err()
        .map(|e| format!("cannot keep the record of .git in the run folder: {e}"))
}

/// Puts `.git` back as the run found it, and says so.
pub(crate) fn finish(guard: Option<&GitGuard>, emitter: &Emitter) {
    let Some(guard) = guard else {
        return;
    };
    for message in words(&guard.restore(), "during the run") {
        emitter.emit(Event::Warning { message });
    }
}

fn words(said: &[Result<String, String>], when: &str) -> Vec<String> {
    said.iter()
        .map(|r| match r {
            // A sentence of its own (a `.git` put back or a fresh repository cleaned).
            Ok(said) if said.ends_with('.') => said.clone(),
            Ok(path) => format!(
                "{path} was changed {when}; restored as it was at the start (hooks, config, \
                 info and alternates of .git are the run's, not the model's)"
            ),
            Err(e) => format!("could not restore .git as it was at the start: {e}"),
        })
        .collect()
}
