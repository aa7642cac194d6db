//! OpenTelemetry: traces by the GenAI semantic conventions, metrics and logs over OTLP,
//! configured by the standard `OTEL_*` environment and off unless an endpoint is set.
//!
//! A run's telemetry is a fold over its events ([`fold::RunFold`]) on a thread of its own:
//! the run's sink only sends each event down a channel, so no span, metric or export work
//! is on the run's path. [`Telemetry::shutdown`] flushes every signal before the process
//! exits, bounded by `OTEL_EXPORTER_OTLP_TIMEOUT`; a collector that cannot be reached costs a
//! warning, never the run's outcome.

pub mod context;
mod fold;
mod logs;
mod metrics;
mod pipeline;
pub mod resource;
pub mod settings;
mod sink;
mod spans;
mod watch;

pub use context::{RunTrace, TraceParent};
pub use fold::{Out, RunFold};
pub use metrics::METRICS;
pub use settings::Settings;
pub use spans::Texts;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use crate::events::{Envelope, EventSink};
use crate::redact::Redactor;

/// What the telemetry thread is told.
enum Msg {
    Attach(u64, Box<RunFold>),
    Event(u64, Box<Envelope>),
    Shutdown(Sender<Vec<String>>),
}

/// The process's telemetry: its settings and, when a signal is on, the channel to its
/// thread. Cloned into every run of the process.
#[derive(Clone)]
pub struct Telemetry {
    settings: Arc<Settings>,
    started: SystemTime,
    tx: Arc<Mutex<Option<Sender<Msg>>>>,
    next_run: Arc<AtomicU64>,
}

impl Telemetry {
    /// From the process environment; `None` when it asks for nothing (no endpoint and no
    /// `TRACEPARENT`). `started` is when cn-run started.
    pub fn from_env(started: SystemTime) -> Option<Telemetry> {
        let var = |name: &str| std::env::var(name).ok();
        let settings = Settings::read(&var);
        for w in &settings.warnings {
            tracing::warn!("telemetry: {w}");
        }
        if settings.signals.is_empty() && settings.parent.is_none() {
            return None;
        }
        let tx = (!settings.signals.is_empty()).then(|| start_thread(&settings, &var));
        Some(Telemetry {
            settings: Arc::new(settings),
            started,
            tx: Arc::new(Mutex::new(tx)),
            next_run: Arc::new(AtomicU64::new(1)),
        })
    }

    /// A run's trace, and the sink that exports its events when traces, metrics or logs are
    /// on. `capture` is the job's own opt-in to content.
    pub fn start_run(
        &self,
        redactor: &Redactor,
        capture: bool,
    ) -> (RunTrace, Option<Box<dyn EventSink>>) {
        let tx = self
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let exported = tx.is_some() && self.settings.enabled(settings::Signal::Traces);
        let salt = fastrand::u64(..).to_be_bytes();
        let trace = RunTrace::new(self.settings.parent.as_ref(), exported, salt);
        let Some(tx) = tx else {
            return (trace, None);
        };
        let texts = Texts {
            redactor: redactor.clone(),
            capture: capture || self.settings.capture_content,
            limit: self.settings.value_limit,
        };
        let key = self.next_run.fetch_add(1, Ordering::Relaxed);
        let fold = RunFold::new(trace.clone(), texts, Some(self.started));
        let _ = tx.send(Msg::Attach(key, Box::new(fold)));
        (trace, Some(Box::new(sink::TelemetrySink { key, tx })))
    }

    /// Flushes every signal and stops the thread, waiting at most the export timeout; says
    /// on stderr what could not be sent. The run's outcome never depends on it.
    pub fn shutdown(&self) {
        let Some(tx) = self
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let (reply, answer) = mpsc::channel();
        if tx.send(Msg::Shutdown(reply)).is_err() {
            return;
        }
        let timeout = self.settings.timeout;
        if let Ok(problems) = answer.recv_timeout(timeout) {
            for p in problems {
                tracing::warn!("telemetry: {p}; the run's outcome is unchanged");
            }
        } else {
            tracing::warn!(
                "telemetry: the collector did not take the run's telemetry within {} s \
             (OTEL_EXPORTER_OTLP_TIMEOUT); what was not sent is dropped",
                timeout.as_secs_f64()
            )
        }
    }
}

/// Starts the telemetry thread; it builds the exporters itself, so nothing of that is on
/// the run's path.
fn start_thread(settings: &Settings, var: &dyn Fn(&str) -> Option<String>) -> Sender<Msg> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let resource = resource::resource(var);
    let settings = settings.clone();
    let spawned = std::thread::Builder::new()
        .name("cn-run-telemetry".to_owned())
        .spawn(move || worker(&settings, &resource, &rx));
    if let Err(e) = spawned {
        tracing::warn!("telemetry: cannot start its thread: {e}; nothing is exported");
    }
    tx
}

/// The telemetry thread: folds each run's events and hands the results to the exporters.
fn worker(settings: &Settings, resource: &opentelemetry_sdk::Resource, rx: &mpsc::Receiver<Msg>) {
    let mut warnings = Vec::new();
    let pipeline = pipeline::Pipeline::build(settings, resource, &mut warnings);
    for w in warnings {
        tracing::warn!("telemetry: {w}");
    }
    let mut runs: std::collections::HashMap<u64, RunFold> = std::collections::HashMap::default();
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Attach(key, fold) => {
                runs.insert(key, *fold);
            }
            Msg::Event(key, env) => {
                if let Some(fold) = runs.get_mut(&key) {
                    for out in fold.on_event(&env) {
                        pipeline.apply(out, fold.trace());
                    }
                }
            }
            Msg::Shutdown(reply) => {
                for fold in runs.values_mut() {
                    for out in fold.finish() {
                        pipeline.apply(out, fold.trace());
                    }
                }
                let _ = reply.send(pipeline.shutdown(settings.timeout));
                return;
            }
        }
    }
}
