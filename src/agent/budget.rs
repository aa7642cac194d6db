//! The run's budget: turns, tokens and cost so far, checked against the job's limits.

use std::time::{Duration, Instant};

use crate::conversation::Usage;
use crate::exit_code::Limit;
use crate::job::Limits;

/// The overall time limit of a job that sets none: CI jobs have limits, and a provider that
/// keeps a stream open must not hold a run for as long as it likes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// Tool calls run from one response when the job sets no `limits.max_calls_per_response`.
pub const DEFAULT_MAX_CALLS_PER_RESPONSE: u32 = 64;

/// The run's time limit and where it comes from (`explain` shows both).
pub fn run_timeout(limits: &Limits) -> (Duration, &'static str) {
    match limits.timeout {
        Some(t) => (t, "job"),
        None => (DEFAULT_TIMEOUT, "default"),
    }
}

/// The run's cap on tool calls per response.
pub fn max_calls_per_response(limits: &Limits) -> usize {
    limits
        .max_calls_per_response
        .unwrap_or(DEFAULT_MAX_CALLS_PER_RESPONSE) as usize
}

/// Counters of one run and the limits they are held to.
///
/// The counters cover the whole run (every process of it: a resumed run goes on from the
/// earlier ones'); the limits hold each process from where it took the run over, as the
/// time limit always did. So a run stopped at its turn, token or cost limit continues on
/// `--resume` with the job's limits afresh, and the result still counts the whole run.
#[derive(Debug, Clone)]
pub struct Budget {
    limits: Limits,
    started: Instant,
    pub turns: u32,
    pub usage: Usage,
    /// `None` once any request's cost is unknown: a sum with a hole in it is not a cost.
    pub cost_usd: Option<f64>,
    /// The counters when this process took the run over (turns, tokens, cost).
    base: (u32, u64, f64),
}

impl Budget {
    pub fn new(limits: Limits) -> Self {
        Budget {
            limits,
            started: Instant::now(),
            turns: 0,
            usage: Usage::default(),
            cost_usd: Some(0.0),
            base: (0, 0, 0.0),
        }
    }

    /// Carry counters over from an earlier part of the same run (resume); this process's
    /// limits count from here.
    pub fn restore(&mut self, turns: u32, usage: Usage, cost_usd: Option<f64>) {
        self.turns = turns;
        self.usage = usage;
        self.cost_usd = cost_usd;
        self.base = (turns, usage.total(), cost_usd.unwrap_or(0.0));
    }

    /// Turns, tokens and cost this process has spent.
    fn spent(&self) -> (u32, u64, Option<f64>) {
        let (turns, tokens, cost) = self.base;
        (
            self.turns.saturating_sub(turns),
            self.usage.total().saturating_sub(tokens),
            self.cost_usd.map(|c| c - cost),
        )
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Count one response's usage and cost (`None` = unknown price).
    pub fn record(&mut self, usage: &Usage, cost: Option<f64>) {
        self.usage.add(usage);
        self.cost_usd = crate::context::pricing::add_cost(self.cost_usd, cost);
    }

    /// What is left of every limit (for a nested agent that shares this budget).
    pub fn remaining(&self) -> Limits {
        let (turns, tokens, cost) = self.spent();
        Limits {
            max_turns: self.limits.max_turns.map(|m| m.saturating_sub(turns)),
            timeout: self
                .limits
                .timeout
                .map(|t| t.saturating_sub(self.started.elapsed())),
            max_cost_usd: self
                .limits
                .max_cost_usd
                .map(|m| (m - cost.unwrap_or(0.0)).max(0.0)),
            max_tokens: self.limits.max_tokens.map(|m| m.saturating_sub(tokens)),
            max_calls_per_response: self.limits.max_calls_per_response,
        }
    }

    /// Add what a nested agent spent.
    pub fn absorb(&mut self, turns: u32, usage: &Usage, cost: Option<f64>) {
        self.turns += turns;
        self.record(usage, cost);
    }

    /// A limit that forbids starting another turn, if any.
    pub fn exceeded(&self) -> Option<Limit> {
        let (turns, tokens, cost) = self.spent();
        if self.limits.max_turns.is_some_and(|m| turns >= m) {
            return Some(Limit::MaxTurns);
        }
        if self.limits.max_tokens.is_some_and(|m| tokens >= m) {
            return Some(Limit::MaxTokens);
        }
        if let (Some(max), Some(cost)) = (self.limits.max_cost_usd, cost)
            && cost >= max
        {
            return Some(Limit::MaxCost);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_tokens_and_cost_limits() {
        let mut b = Budget::new(Limits {
            max_turns: Some(2),
            max_tokens: Some(100),
            max_cost_usd: Some(0.5),
            ..Limits::default()
        });
        assert_eq!(b.exceeded(), None);
        b.record(
            &Usage {
                input_tokens: 60,
                output_tokens: 50,
                ..Usage::default()
            },
            Some(0.1),
        );
        assert_eq!(b.exceeded(), Some(Limit::MaxTokens));
        let mut c = Budget::new(Limits {
            max_cost_usd: Some(0.5),
            ..Limits::default()
        });
        c.record(&Usage::default(), Some(0.6));
        assert_eq!(c.exceeded(), Some(Limit::MaxCost));
        let mut d = Budget::new(Limits {
            max_turns: Some(2),
            ..Limits::default()
        });
        d.turns = 2;
        assert_eq!(d.exceeded(), Some(Limit::MaxTurns));
    }

    #[test]
    fn a_resumed_process_gets_the_limits_afresh_and_the_counters_go_on() {
        let limits = Limits {
            max_turns: Some(2),
            max_tokens: Some(100),
            max_cost_usd: Some(0.5),
            ..Limits::default()
        };
        let mut b = Budget::new(limits);
        let usage = Usage {
            input_tokens: 90,
            output_tokens: 20,
            ..Usage::default()
        };
        // The earlier process stopped at every limit.
        b.restore(2, usage, Some(0.6));
        assert_eq!(b.exceeded(), None);
        assert_eq!(b.remaining().max_turns, Some(2));
        assert_eq!(b.remaining().max_tokens, Some(100));
        b.turns += 2;
        assert_eq!(b.exceeded(), Some(Limit::MaxTurns));
        assert_eq!(b.turns, 4, "the run's count goes on");
        let mut c = Budget::new(Limits {
            max_cost_usd: Some(0.5),
            ..Limits::default()
        });
        c.restore(1, Usage::default(), Some(0.6));
        c.record(&Usage::default(), Some(0.4));
        assert_eq!(c.exceeded(), None);
        c.record(&Usage::default(), Some(0.1));
        assert_eq!(c.exceeded(), Some(Limit::MaxCost));
        assert!((c.cost_usd.unwrap() - 1.1).abs() < 1e-9);
    }

    #[test]
    fn unknown_cost_stays_unknown() {
        let mut b = Budget::new(Limits::default());
        b.record(&Usage::default(), Some(0.2));
        b.record(&Usage::default(), None);
        b.record(&Usage::default(), Some(0.2));
        assert_eq!(b.cost_usd, None);
    }
}
