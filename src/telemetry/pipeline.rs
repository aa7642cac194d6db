//! The export side, on the telemetry thread: the SDK's batch span processor, periodic
//! metric reader and batch log processor, each over an OTLP exporter of the signal's
//! protocol (gRPC exporters get a one-worker runtime of their own), and the bounded
//! shutdown that flushes all three at once.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_otlp::{LogExporter, MetricExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{BatchLogProcessor, SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanProcessor as _};

use super::context::RunTrace;
use super::fold::Out;
use super::logs::LogItem;
use super::metrics::Instruments;
use super::settings::{Protocol, Settings, Signal};
use super::watch::{Watch, Watched};

/// The OTLP exporter `builder` makes for `protocol`, reporting to `watch` (the three
/// signals' builders are different types with the same two transports).
macro_rules! exporter {
    ($builder:expr, $protocol:expr, $watch:expr) => {
        Watched {
            inner: match $protocol {
                Protocol::Grpc => $builder
                    .with_tonic()
                    .with_protocol(opentelemetry_otlp::Protocol::Grpc)
                    .build()?,
                Protocol::HttpProtobuf => $builder
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                    .build()?,
            },
            watch: $watch.clone(),
        }
    };
}

/// The three signals' export machinery (each `None` when its signal is off).
pub(super) struct Pipeline {
    spans: Option<BatchSpanProcessor>,
    metrics: Option<(SdkMeterProvider, Instruments)>,
    logs: Option<(SdkLoggerProvider, SdkLogger)>,
    watches: Vec<(Signal, String, Arc<Watch>)>,
    runtime: Option<tokio::runtime::Runtime>,
}

type Built<T> = Result<T, opentelemetry_otlp::ExporterBuildError>;

impl Pipeline {
    /// The exporters `settings` enable; what could not be built is said in `warnings`.
    pub(super) fn build(
        settings: &Settings,
        resource: &Resource,
        warnings: &mut Vec<String>,
    ) -> Self {
        let grpc = settings
            .signals
            .iter()
            .any(|(_, p, _)| *p == Protocol::Grpc);
        let runtime = grpc
            .then(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("cn-run-otlp")
                    .enable_all()
                    .build()
            })
            .and_then(|r| {
                r.map_err(|e| warnings.push(format!("no runtime for gRPC: {e}")))
                    .ok()
            });
        // tonic's channel starts its task on the runtime it is built in.
        let guard = runtime.as_ref().map(tokio::runtime::Runtime::enter);
        let mut p = Pipeline {
            spans: None,
            metrics: None,
            logs: None,
            watches: Vec::new(),
            runtime: None,
        };
        for (signal, protocol, endpoint) in &settings.signals {
            let watch = Arc::new(Watch::default());
            let built = match signal {
                Signal::Traces => p.traces(*protocol, resource, &watch),
                Signal::Metrics => p.meters(*protocol, resource, &watch),
                Signal::Logs => p.loggers(*protocol, resource, &watch),
            };
            match built {
                Ok(()) => p.watches.push((*signal, endpoint.clone(), watch)),
                Err(e) => warnings.push(format!("{} to {endpoint} are off: {e}", name(*signal))),
            }
        }
        drop(guard);
        p.runtime = runtime;
        p
    }

    fn traces(&mut self, protocol: Protocol, resource: &Resource, watch: &Arc<Watch>) -> Built<()> {
        let exporter = exporter!(SpanExporter::builder(), protocol, watch);
        let mut processor = BatchSpanProcessor::builder(exporter).build();
        processor.set_resource(resource);
        self.spans = Some(processor);
        Ok(())
    }

    fn meters(&mut self, protocol: Protocol, resource: &Resource, watch: &Arc<Watch>) -> Built<()> {
        let exporter = exporter!(MetricExporter::builder(), protocol, watch);
        let provider = SdkMeterProvider::builder()
            .with_resource(resource.clone())
            .with_reader(PeriodicReader::builder(exporter).build())
            .build();
        let instruments = Instruments::new(&provider.meter("cn-run"));
        self.metrics = Some((provider, instruments));
        Ok(())
    }

    fn loggers(
        &mut self,
        protocol: Protocol,
        resource: &Resource,
        watch: &Arc<Watch>,
    ) -> Built<()> {
        let exporter = exporter!(LogExporter::builder(), protocol, watch);
        let provider = SdkLoggerProvider::builder()
            .with_resource(resource.clone())
            .with_log_processor(BatchLogProcessor::builder(exporter).build())
            .build();
        let logger = provider.logger("cn-run");
        self.logs = Some((provider, logger));
        Ok(())
    }

    /// Hands one output of a run's fold to its signal.
    pub(super) fn apply(&self, out: Out, trace: &RunTrace) {
        match out {
            Out::Span(span) => {
                if let Some(p) = &self.spans {
                    p.on_end(*span);
                }
            }
            Out::Measure(m) => {
                if let Some((_, instruments)) = &self.metrics {
                    instruments.record(&m);
                }
            }
            Out::Log(item) => {
                if let Some((_, logger)) = &self.logs {
                    emit(logger, *item, trace);
                }
            }
        }
    }

    /// Flushes and stops every signal at once, each within `timeout`; what went wrong, one
    /// sentence per signal.
    pub(super) fn shutdown(self, timeout: Duration) -> Vec<String> {
        let (spans, metrics, logs) = (self.spans, self.metrics, self.logs);
        let results: Vec<(Signal, OTelSdkResult)> = std::thread::scope(|s| {
            let t = s.spawn(|| spans.map(|p| p.shutdown_with_timeout(timeout)));
            let m = s.spawn(|| metrics.map(|(p, _)| p.shutdown_with_timeout(timeout)));
            let l = s.spawn(|| logs.map(|(p, _)| p.shutdown_with_timeout(timeout)));
            [
                (Signal::Traces, t.join()),
                (Signal::Metrics, m.join()),
                (Signal::Logs, l.join()),
            ]
            .into_iter()
            .filter_map(|(signal, joined)| match joined {
                Ok(Some(result)) => Some((signal, result)),
                Ok(None) => None,
                Err(_) => Some((
                    signal,
                    Err(opentelemetry_sdk::error::OTelSdkError::InternalFailure(
                        "panicked".into(),
                    )),
                )),
            })
            .collect()
        });
        let mut said = Vec::new();
        for (signal, endpoint, watch) in &self.watches {
            let (exports, failures, last) = watch.tally();
            let flushed = results.iter().find(|(s, _)| s == signal).map(|(_, r)| r);
            let sentence = match (failures, flushed) {
                (0, Some(Err(e))) => {
                    format!("{} to {endpoint} were not all sent: {e}", name(*signal))
                }
                (0, _) => continue,
                (n, _) => format!(
                    "{n} of {exports} exports of {} to {endpoint} failed (last: {})",
                    name(*signal),
                    last.unwrap_or_default()
                ),
            };
            said.push(sentence);
        }
        if let Some(rt) = self.runtime {
            rt.shutdown_background();
        }
        said
    }
}

fn name(signal: Signal) -> &'static str {
    match signal {
        Signal::Traces => "traces",
        Signal::Metrics => "metrics",
        Signal::Logs => "logs",
    }
}

/// An attribute value as a log record's.
fn any_value(value: opentelemetry::Value) -> AnyValue {
    match value {
        opentelemetry::Value::Bool(b) => AnyValue::Boolean(b),
        opentelemetry::Value::I64(i) => AnyValue::Int(i),
        opentelemetry::Value::F64(f) => AnyValue::Double(f),
        opentelemetry::Value::String(s) => AnyValue::String(s),
        other => AnyValue::String(other.to_string().into()),
    }
}

/// One log record through the logger, tied to its span.
fn emit(logger: &SdkLogger, item: LogItem, trace: &RunTrace) {
    let mut record = logger.create_log_record();
    record.set_event_name(item.name);
    record.set_timestamp(item.time);
    record.set_observed_timestamp(item.time);
    record.set_severity_number(item.severity);
    record.set_severity_text(item.severity.name());
    record.set_body(item.name.into());
    record.add_attributes(
        item.attributes
            .into_iter()
            .map(|kv| (kv.key, any_value(kv.value))),
    );
    record.set_trace_context(trace.trace_id, item.span, Some(trace.flags));
    logger.emit(record);
}
