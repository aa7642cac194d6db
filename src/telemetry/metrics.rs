//! The metrics: the GenAI client metrics of the semantic conventions and what Continue's
//! `cn` measures (runs by outcome, cost, turns, lines changed, tool calls by decision,
//! checks, MCP connections, time to first request), one table with each metric's name,
//! unit, kind and meaning. The fold produces [`Measure`]s; [`Instruments`] records them.

use std::collections::HashMap;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};

/// One metric cn-run exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    TokenUsage,
    OperationDuration,
    Runs,
    RunDuration,
    Cost,
    Turns,
    LinesChanged,
    ToolCalls,
    Checks,
    McpConnections,
    TimeToFirstRequest,
}

/// How a metric is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A counter of whole things.
    Count,
    /// A counter of an amount (US dollars).
    Sum,
    /// A histogram of seconds.
    Seconds,
    /// A histogram of tokens.
    Tokens,
}

/// Name, unit, kind and description of every metric (the README's table says the same).
pub const METRICS: &[(Metric, &str, &str, Kind, &str)] = &[
    (
        Metric::TokenUsage,
        "gen_ai.client.token.usage",
        "{token}",
        Kind::Tokens,
        "Tokens of each model response, by gen_ai.token.type (input, output)",
    ),
    (
        Metric::OperationDuration,
        "gen_ai.client.operation.duration",
        "s",
        Kind::Seconds,
        "Duration of each model request, error.type set when it failed",
    ),
    (
        Metric::Runs,
        "cn_run.run.count",
        "{run}",
        Kind::Count,
        "Runs that ended, by cn_run.status and cn_run.exit_code",
    ),
    (
        Metric::RunDuration,
        "cn_run.run.duration",
        "s",
        Kind::Seconds,
        "Duration of each run, by cn_run.status",
    ),
    (
        Metric::Cost,
        "cn_run.cost.usage",
        "USD",
        Kind::Sum,
        "Cost of the model responses whose price is known",
    ),
    (
        Metric::Turns,
        "cn_run.turn.count",
        "{turn}",
        Kind::Count,
        "Turns (model responses) of the runs that ended",
    ),
    (
        Metric::LinesChanged,
        "cn_run.lines_of_code.count",
        "{line}",
        Kind::Count,
        "Lines the runs changed (diff.patch), by type (added, removed)",
    ),
    (
        Metric::ToolCalls,
        "cn_run.tool.call.count",
        "{call}",
        Kind::Count,
        "Tool calls by gen_ai.tool.name, cn_run.tool.decision and cn_run.tool.status",
    ),
    (
        Metric::Checks,
        "cn_run.check.count",
        "{check}",
        Kind::Count,
        "Checks run, by cn_run.check.name and cn_run.check.result (passed, failed)",
    ),
    (
        Metric::McpConnections,
        "cn_run.mcp.connection.count",
        "{connection}",
        Kind::Count,
        "MCP servers started, by cn_run.mcp.server and cn_run.mcp.status (ready, failed)",
    ),
    (
        Metric::TimeToFirstRequest,
        "cn_run.time_to_first_request",
        "s",
        Kind::Seconds,
        "From cn-run's start to the run's first model request",
    ),
];

/// Bucket boundaries the GenAI conventions advise for token counts.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
/// Bucket boundaries the GenAI conventions advise for durations (seconds).
const SECOND_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// One measurement the fold made.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    pub metric: Metric,
    pub value: f64,
    pub attributes: Vec<KeyValue>,
}

impl Measure {
    pub fn new(metric: Metric, value: f64, attributes: Vec<KeyValue>) -> Self {
        Measure {
            metric,
            value,
            attributes,
        }
    }
}

enum Instrument {
    Count(Counter<u64>),
    Sum(Counter<f64>),
    Histogram(Histogram<f64>),
    Tokens(Histogram<u64>),
}

/// Every metric's instrument, made once per process.
pub(super) struct Instruments(HashMap<Metric, Instrument>);

impl Instruments {
    pub(super) fn new(meter: &Meter) -> Self {
        let made = METRICS.iter().map(|&(metric, name, unit, kind, about)| {
            // The SDK's builder of that instrument type, named and described.
            macro_rules! described {
                ($make:ident) => {
                    meter.$make(name).with_unit(unit).with_description(about)
                };
            }
            let instrument = match kind {
                Kind::Count => Instrument::Count(described!(u64_counter).build()),
                Kind::Sum => Instrument::Sum(described!(f64_counter).build()),
                Kind::Seconds => Instrument::Histogram(
                    described!(f64_histogram)
                        .with_boundaries(SECOND_BUCKETS.to_vec())
                        .build(),
                ),
                Kind::Tokens => Instrument::Tokens(
                    described!(u64_histogram)
                        .with_boundaries(TOKEN_BUCKETS.to_vec())
                        .build(),
                ),
            };
            (metric, instrument)
        });
        Instruments(made.collect())
    }

    pub(super) fn record(&self, m: &Measure) {
        match self.0.get(&m.metric) {
            Some(Instrument::Count(c)) => c.add(m.value.max(0.0) as u64, &m.attributes),
            Some(Instrument::Sum(c)) => c.add(m.value.max(0.0), &m.attributes),
            Some(Instrument::Histogram(h)) => h.record(m.value.max(0.0), &m.attributes),
            Some(Instrument::Tokens(h)) => h.record(m.value.max(0.0) as u64, &m.attributes),
            None => {}
        }
    }
}
