//! OpenTelemetry export.

mod telemetry_context_e2e;
mod telemetry_e2e;
