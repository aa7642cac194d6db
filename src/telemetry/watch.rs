//! An exporter wrapped to count its exports and failures: the SDK's processors export on
//! their own threads and drop an error after logging it, and cn-run says at its end, in one
//! warning per signal, that a collector could not be reached — never more than that.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// What one signal's exports came to.
#[derive(Debug, Default)]
pub(super) struct Watch {
    exports: AtomicU32,
    failures: AtomicU32,
    last_error: Mutex<Option<String>>,
}

impl Watch {
    fn note(&self, result: &OTelSdkResult) {
        self.exports.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = result {
            self.failures.fetch_add(1, Ordering::Relaxed);
            *self
                .last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
        }
    }

    /// `(exports, failures, last error)`.
    pub(super) fn tally(&self) -> (u32, u32, Option<String>) {
        let last = self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        (
            self.exports.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
            last,
        )
    }
}

/// An exporter and the watch it reports to.
#[derive(Debug)]
pub(super) struct Watched<E> {
    pub inner: E,
    pub watch: Arc<Watch>,
}

impl<E: SpanExporter> SpanExporter for Watched<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.watch.note(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: LogExporter> LogExporter for Watched<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.watch.note(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Watched<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.watch.note(&result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
