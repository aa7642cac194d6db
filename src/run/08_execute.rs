//! Step 8 of a run: execute it — the agent loop and the checks, a panic caught here.
//!
//! The outer loop of a run: the agent works until it stops; then its answer is checked
//! against the output schema (one repair turn allowed) and the job's checks run. A failed
//! check goes back to the agent as a new message in the same conversation while attempts
//! remain. The run succeeds only when the agent finished and every check passed. A resumed
//! run whose agent had answered goes on from its checks (those that ran to their end in the
//! earlier process are not run again), without asking the model again.

use futures_util::FutureExt;
use serde_json::Value;

use super::continuation::Continuation;
use super::panic_message;
use super::prepare::Prepared;
use crate::agent::{Agent, ContextWindow, Outcome, RunState};
use crate::checks::{CheckResult, feedback, run_checks};
use crate::config::RunConfig;
use crate::conversation::Message;
use crate::events::Event;
use crate::job::Job;
use crate::structured::{repair_message, validate_output};

/// The agent loop and the checks; a panic inside becomes an internal error of the run
/// (exit 6), never a lost result.
pub(crate) async fn execute(
    config: &RunConfig,
    run: &Prepared,
    state: &mut RunState,
) -> (Outcome, AttemptsReport) {
    let job = config.job();
    let mut agent = Agent {
        client: run.client.as_ref(),
        tools: &run.tools.registry,
        policy: &run.tools.policy,
        shared: run.shared.clone(),
        emitter: &run.emitter,
        redactor: &run.redactor,
        stop: run.stop.clone(),
        config: config.agent().clone(),
        system: run.system.clone(),
        hooks: &run.hooks,
        rules: run.conditional_rules.clone(),
        narrow: None,
        text_history: crate::agent::TextHistory::default(),
        user_hooks: &run.user_hooks,
        window: Some(ContextWindow::new(
            &job.model.name,
            config.context_length().0,
            job.model.max_tokens.map(u64::from),
        )),
    };
    let attempts = async {
        match &run.tools.failure {
            Some(e) => (Outcome::Internal(e.clone()), AttemptsReport::default()),
            None => run_attempts(&mut agent, state, job, run.continuation.clone()).await,
        }
    };
    std::panic::AssertUnwindSafe(attempts)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            let why = format!("panic in the agent loop: {}", panic_message(&*panic));
            (Outcome::Internal(why), AttemptsReport::default())
        })
}

/// What the attempts produced besides the outcome.
#[derive(Debug, Default)]
pub(crate) struct AttemptsReport {
    pub attempts: u32,
    pub structured_output: Option<Value>,
    pub checks: Vec<CheckResult>,
}

pub(crate) async fn run_attempts(
    agent: &mut Agent<'_>,
    state: &mut RunState,
    job: &Job,
    resumed: Continuation,
) -> (Outcome, AttemptsReport) {
    let mut report = AttemptsReport {
        attempts: resumed.attempt.max(1),
        ..AttemptsReport::default()
    };
    let mut repaired = false;
    let (mut answered, mut done) = (resumed.answered, resumed.checks_done);
    if let Some(outcome) = agent.run_started(state).await {
        return (outcome, report);
    }
    loop {
        let outcome = if std::mem::take(&mut answered) {
            Outcome::Completed
        } else {
            agent.run(state).await
        };
        if !matches!(outcome, Outcome::Completed) {
            return (outcome, report);
        }
        match answer_check(agent, state, job, &mut report, &mut repaired) {
            AnswerCheck::Valid => {}
            AnswerCheck::Repair => continue,
            AnswerCheck::Rejected(outcome) => return (outcome, report),
        }
        if job.checks.is_empty() {
            return (Outcome::Completed, report);
        }
        let results = checks(agent, job, report.attempts, std::mem::take(&mut done)).await;
        if agent.shared.cancel.is_cancelled() {
            report.checks.extend(results);
            return (agent.stop_outcome().unwrap_or(Outcome::Interrupted), report);
        }
        let failed: Vec<&CheckResult> = results.iter().filter(|r| !r.passed).collect();
        let message =
            (!failed.is_empty()).then(|| feedback(&failed, report.attempts, job.max_attempts));
        let names: Vec<String> = failed.iter().map(|r| r.name.clone()).collect();
        report.checks.extend(results);
        let Some(message) = message else {
            return (Outcome::Completed, report);
        };
        if report.attempts >= job.max_attempts {
            return (
                Outcome::Rejected(format!(
                    "checks still fail after {} attempt(s): {}",
                    report.attempts,
                    names.join(", ")
                )),
                report,
            );
        }
        report.attempts += 1;
        repaired = false;
        agent.emitter.emit(Event::AttemptStarted {
            attempt: report.attempts,
        });
        agent.append(state, Message::user(message));
    }
}

/// What the answer's check against `output_schema` says (nothing to check: valid).
enum AnswerCheck {
    Valid,
    /// Not valid: the agent gets one repair turn.
    Repair,
    /// Not valid after the repair turn.
    Rejected(Outcome),
}

/// Validates the final answer against the job's `output_schema` (one repair turn).
fn answer_check(
    agent: &Agent<'_>,
    state: &mut RunState,
    job: &Job,
    report: &mut AttemptsReport,
    repaired: &mut bool,
) -> AnswerCheck {
    let Some(schema) = &job.output_schema else {
        return AnswerCheck::Valid;
    };
    match validate_output(schema, &state.final_text) {
        Ok(value) => {
            agent.emitter.emit(Event::OutputValidated {
                valid: true,
                errors: Vec::new(),
                value: Some(value.clone()),
            });
            report.structured_output = Some(value);
            AnswerCheck::Valid
        }
        Err(errors) => {
            agent.emitter.emit(Event::OutputValidated {
                valid: false,
                errors: errors.clone(),
                value: None,
            });
            if *repaired {
                let why = format!(
                    "the final answer does not match output_schema: {}",
                    errors.join("; ")
                );
                return AnswerCheck::Rejected(Outcome::Rejected(why));
            }
            *repaired = true;
            agent.append(state, Message::user(repair_message(&errors)));
            AnswerCheck::Repair
        }
    }
}

/// The job's checks for `attempt`: those in `done` (run to their end by an earlier process)
/// as they came out, the others run now; in the job's order.
async fn checks(
    agent: &Agent<'_>,
    job: &Job,
    attempt: u32,
    done: Vec<CheckResult>,
) -> Vec<CheckResult> {
    agent.hooks.before_changes().await;
    let shared = agent.shared.clone();
    let to_run: Vec<crate::job::Check> = job
        .checks
        .iter()
        .filter(|c| !done.iter().any(|d| d.name == c.name))
        .cloned()
        .collect();
    let emitter = agent.emitter;
    let fresh = run_checks(
        &to_run,
        attempt,
        &shared.workspace,
        &shared.env,
        &shared.cancel,
        shared.sandbox(),
        &mut |r| emitter.emit(Event::CheckFinished(r.clone())),
    )
    .await;
    let mut all: Vec<CheckResult> = done.into_iter().chain(fresh).collect();
    all.sort_by_key(|r| job.checks.iter().position(|c| c.name == r.name));
    all
}
