//! Progress for a person watching stderr: one short line per thing that happened, and
//! one line saying how the run ended, which `--quiet` keeps. In GitHub Actions a lone job
//! folds each turn into a `::group::`; with several jobs in one step each job's lines are
//! held and written as one group when it ends (groups cannot nest, and parallel jobs'
//! `::group::` lines would interleave), its outcome line after it.

use crate::events::{self, Envelope, Event, EventSink, HookDecision};
use crate::observability::{LogHandle, outcome, progress};

/// Prints progress lines to stderr (through the redacting log writer) unless `--quiet`.
pub struct ProgressSink {
    log: LogHandle,
    job: String,
    /// Fold each turn into a `::group::` in GitHub Actions logs.
    groups: bool,
    /// The job's lines so far, held for its one group (several jobs in Actions).
    held: Option<String>,
}

impl ProgressSink {
    pub fn new(log: LogHandle, job: &str) -> Self {
        let groups = super::github::is_actions();
        let held = (groups && log.shared && !log.quiet).then(String::new);
        ProgressSink {
            log,
            job: job.to_owned(),
            groups: groups && held.is_none(),
            held,
        }
    }

    /// A progress line: printed, or held for the job's group.
    fn line(&mut self, line: &str) {
        match &mut self.held {
            Some(held) => {
                held.push_str(line);
                held.push('\n');
            }
            None => progress(&self.log, line),
        }
    }

    /// How the run ended: after the job's held group, if any; kept by `--quiet`.
    fn ended(&mut self, line: &str, status: &str) {
        let text = match self.held.take() {
            Some(held) => format!(
                "::group::{} — {status} (its log)\n{held}::endgroup::\n{line}\n",
                self.job
            ),
            None => format!("{line}\n"),
        };
        outcome(&self.log, &text);
    }
}

fn short(v: &serde_json::Value) -> String {
    let text = match v.as_object().and_then(|o| o.values().next()) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let first = text.lines().next().unwrap_or("");
    if first.chars().count() > 80 {
        format!("{}…", first.chars().take(80).collect::<String>())
    } else {
        first.to_owned()
    }
}

impl EventSink for ProgressSink {
    fn on_event(&mut self, env: &Envelope) {
        let line = match &env.event {
            Event::TurnStarted { turn } if self.groups => {
                format!("::group::{} turn {turn}", self.job)
            }
            Event::TurnCompleted { .. } if self.groups => "::endgroup::".to_owned(),
            Event::RunStarted {
                model,
                provider,
                workspace,
                ..
            } => {
                // Said at once, also when the job's other lines are held for its group.
                let line = format!(
                    "[{}] run {} — {provider}/{model} in {workspace}",
                    self.job, env.run_id
                );
                progress(&self.log, &line);
                return;
            }
            Event::ToolStarted {
                turn,
                tool,
                arguments,
                ..
            } => {
                format!("[{}] turn {turn}: {tool} {}", self.job, short(arguments))
            }
            Event::PermissionDecision {
                turn,
                tool,
                resolution,
                decision,
                ..
            } => format!(
                "[{}] turn {turn}: {tool} {} by {} — {}",
                self.job,
                format!("{resolution:?}").to_lowercase(),
                decision.rule.as_deref().unwrap_or("default"),
                decision.reason
            ),
            Event::ModelRetry {
                attempt,
                delay_ms,
                message,
                ..
            } => format!(
                "[{}] model request failed ({message}); retry {attempt} in {:.1} s",
                self.job,
                *delay_ms as f64 / 1000.0
            ),
            Event::Warning { message } => format!("[{}] warning: {message}", self.job),
            Event::HookRan {
                hook_event,
                command,
                decision,
                reason,
                failure,
                ..
            } => {
                if failure.is_none() && *decision == HookDecision::Nothing {
                    return;
                }
                let said = failure.as_deref().unwrap_or(decision.as_str());
                let why = reason
                    .as_deref()
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default();
                format!("[{}] hook {hook_event} `{command}`: {said}{why}", self.job)
            }
            Event::RunCompleted {
                status,
                reason,
                num_turns,
                duration_ms,
                total_cost_usd,
                ..
            } => {
                let cost = total_cost_usd
                    .map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"));
                let line = format!(
                    "[{}] {} after {num_turns} turns, {:.1} s, {cost}: {reason}",
                    self.job,
                    status.as_str(),
                    *duration_ms as f64 / 1000.0
                );
                self.ended(&line, status.as_str());
                return;
            }
            // Not a progress line (a turn's group markers only when grouping).
            events::ignored!(
                turn_marks, notes, result_records, conversation;
                AssistantMessage, ToolFinished, CheckpointCreated, SessionFinished
            ) => {
                return;
            }
        };
        self.line(&line);
    }
}
