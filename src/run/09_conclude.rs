//! Step 9 of a run: conclude it — stop what the run started (background commands, MCP
//! servers, the hooks), put `.git` back, classify the outcome, then `finish` writes the files.

use super::execute::AttemptsReport;
use super::finish::{Finished, finish};
use super::prepare::Prepared;
use crate::agent::{Outcome, RunState};
use crate::config::RunConfig;
use crate::exit_code::{Limit, Status};
use crate::report::RunResult;

/// Stop what the run started, then write its outputs (`finish`). Signals are listened
/// to until the last file is written.
pub(crate) async fn conclude(
    config: &RunConfig,
    mut run: Prepared,
    state: &RunState,
    outcome: Outcome,
    report: AttemptsReport,
) -> RunResult {
    let store = run.store.take();
    run.shared.background().kill_all().await;
    run.shared.commands_done();
    if let Some(hub) = run.tools.hub.take() {
        hub.shutdown().await;
    }
    if let (false, Some(c)) = (report.checks.is_empty(), &run.checkpoints) {
        c.note_change();
    }
    // Before the diff, rollback and the workflow's next git command.
    super::git_trust::finish(run.git_guard.as_ref(), &run.emitter);
    run.user_hooks.session_end("other", &run.emitter).await;
    let (status, reason, limit) = classify(&outcome, config);
    let finished = Finished {
        outcome: &outcome,
        status,
        reason,
        limit,
        jobs_in_call: config.jobs_in_call(),
    };
    let result = finish(config.job(), state, &mut run, finished).await;
    // After the run's last file: the store gets the folder whole (briefly, once a signal
    // has come: the runner's kill follows it).
    super::store_sync::finish(store, &run.signals.interrupt).await;
    run.signals.task.abort();
    run.stop.token().cancel();
    result
}

/// Status, reason and limit of an outcome (a limit named with the value the run resolved).
pub(crate) fn classify(
    outcome: &Outcome,
    config: &crate::config::RunConfig,
) -> (Status, String, Option<Limit>) {
    let job = config.job();
    match outcome {
        Outcome::Completed => (Status::Success, "the agent finished".to_owned(), None),
        Outcome::Failed(r) => (
            Status::Failed,
            format!("the agent reported failure: {r}"),
            None,
        ),
        Outcome::Rejected(r) | Outcome::Truncated(r) | Outcome::Filtered(r) => {
            (Status::Failed, r.clone(), None)
        }
        Outcome::ApprovalRequired(r) => (Status::ApprovalRequired, r.clone(), None),
        Outcome::Limit(l) => {
            let value = match l {
                Limit::MaxTurns => job.limits.max_turns.map(|v| v.to_string()),
                Limit::Timeout => Some(format!("{} s", config.timeout().0.as_secs_f64())),
                Limit::MaxCost => job.limits.max_cost_usd.map(|v| format!("${v}")),
                Limit::MaxTokens => job.limits.max_tokens.map(|v| v.to_string()),
            };
            let reason = format!(
                "limit reached: {} ({})",
                l.as_str(),
                value.unwrap_or_default()
            );
            (Status::LimitReached, reason, Some(*l))
        }
        Outcome::Provider(e) => (
            Status::ProviderError,
            format!("model provider failed: {e}"),
            None,
        ),
        Outcome::Internal(m) => (Status::InternalError, format!("internal error: {m}"), None),
        Outcome::Interrupted => (
            Status::Interrupted,
            "interrupted by a signal".to_owned(),
            None,
        ),
    }
}
