//! Progress for a person watching stderr: one short line per thing that happened.

use crate::events::{Envelope, Event, EventSink};
use crate::observability::{LogHandle, progress};

/// Prints progress lines to stderr (through the redacting log writer) unless `--quiet`.
pub struct ProgressSink {
    log: LogHandle,
    job: String,
    /// Fold each turn into a `::group::` in GitHub Actions logs.
    groups: bool,
}

impl ProgressSink {
    pub fn new(log: LogHandle, job: &str) -> Self {
        ProgressSink {
            log,
            job: job.to_owned(),
            groups: super::github::is_actions(),
        }
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
                format!(
                    "[{}] run {} — {provider}/{model} in {workspace}",
                    self.job, env.run_id
                )
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
                format!(
                    "[{}] {} after {num_turns} turns, {:.1} s, {cost}: {reason}",
                    self.job,
                    status.as_str(),
                    *duration_ms as f64 / 1000.0
                )
            }
            _ => return,
        };
        progress(&self.log, &line);
    }
}
