//! The live display for a person at a terminal: one indicatif line per running job with
//! its turn, tokens, cost, elapsed time and current tool. Used only when stderr is a
//! terminal (and not in GitHub Actions); CI logs get plain lines instead (`progress`).

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::events::{self, Envelope, Event, EventSink};
use crate::redact::Redactor;

/// Whether a live display makes sense: stderr is a terminal and we are not in CI.
pub fn wanted() -> bool {
    std::io::stderr().is_terminal()
        && !super::github::is_actions()
        && std::env::var_os("CI").is_none()
}

/// The shared display all jobs of one call draw into.
pub fn display() -> Arc<MultiProgress> {
    Arc::new(MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// One job's line.
pub struct LiveSink {
    bar: ProgressBar,
    job: String,
    turn: u32,
    tokens: u64,
    cost: Option<f64>,
    tool: String,
    redactor: Redactor,
}

impl LiveSink {
    pub fn new(display: &MultiProgress, job: &str, redactor: Redactor) -> Self {
        let bar = display.add(ProgressBar::new_spinner());
        let style = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(120));
        LiveSink {
            bar,
            job: job.to_owned(),
            turn: 0,
            tokens: 0,
            cost: Some(0.0),
            tool: String::new(),
            redactor,
        }
    }

    fn render(&self) {
        let cost = self
            .cost
            .map_or_else(|| "cost ?".to_owned(), |c| format!("${c:.4}"));
        let tokens = if self.tokens >= 1000 {
            format!("{:.1}k", self.tokens as f64 / 1000.0)
        } else {
            self.tokens.to_string()
        };
        let mut msg = format!(
            "{} · turn {} · {tokens} tokens · {cost}",
            self.job, self.turn
        );
        if !self.tool.is_empty() {
            msg.push_str(" · ");
            msg.push_str(&self.tool);
        }
        self.bar
            .set_message(self.redactor.redact(&msg).into_owned());
    }
}

impl EventSink for LiveSink {
    fn on_event(&mut self, env: &Envelope) {
        match &env.event {
            Event::TurnStarted { turn } if env.parent_call_id.is_none() => self.turn = *turn,
            Event::AssistantMessage {
                usage, cost_usd, ..
            } => {
                self.tokens += usage.map_or(0, |u| u.total());
                self.cost = crate::context::pricing::add_cost(self.cost, *cost_usd);
            }
            Event::ToolStarted {
                tool, arguments, ..
            } => {
                let arg = arguments
                    .as_object()
                    .and_then(|o| o.values().next())
                    .map(|v| match v {
                        serde_json::Value::String(s) => {
                            s.lines().next().unwrap_or("").chars().take(50).collect()
                        }
                        other => other.to_string().chars().take(50).collect::<String>(),
                    });
                self.tool = format!("{tool} {}", arg.unwrap_or_default());
            }
            Event::ToolFinished { .. } => self.tool.clear(),
            Event::RunCompleted { status, reason, .. } => {
                self.bar.finish_with_message(format!(
                    "{} · {} · {}",
                    self.job,
                    status.as_str(),
                    self.redactor.redact(reason)
                ));
                return;
            }
            // Nothing the bar shows (a nested agent's turns are not the run's).
            events::ignored!(
                turn_marks, call_details, notes, result_records, conversation;
                RunStarted, ModelRetry, CheckpointCreated, Warning, SessionFinished
            ) => {
                return;
            }
        }
        self.render();
    }
}
