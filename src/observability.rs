//! Logging: tracing to stderr only (stdout is machine output), filtered by `CN_RUN_LOG` or
//! `-v`, with every line passed through the secret registry (`redact::redact_output`, the
//! secrets of every run of the process) so no secret reaches a CI log.

use std::io::Write;
use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::cli::LogArgs;
use crate::redact::Redactor;

/// Handle to the log set-up; the app registers each run's secrets once it knows them.
#[derive(Clone, Default)]
pub struct LogHandle {
    pub quiet: bool,
    /// The live terminal display, when stderr is a terminal (see `report::live`).
    pub live: Option<Arc<indicatif::MultiProgress>>,
    /// When the process started (telemetry's time to the first request).
    pub started: Option<std::time::SystemTime>,
    /// OpenTelemetry, when the environment asks for it (`run` commands only).
    pub telemetry: Option<crate::telemetry::Telemetry>,
    /// Several jobs share this log: in GitHub Actions each job's lines are held and shown
    /// as one group when it ends, so parallel jobs' groups never interleave.
    pub shared: bool,
}

impl LogHandle {
    /// This handle with the telemetry the environment asks for (`OTEL_*`, `TRACEPARENT`).
    pub fn with_telemetry(&self) -> LogHandle {
        let started = self.started.unwrap_or_else(std::time::SystemTime::now);
        LogHandle {
            telemetry: crate::telemetry::Telemetry::from_env(started),
            ..self.clone()
        }
    }

    /// Add a run's secrets to those every log line is masked with (parallel runs add up).
    pub fn set_redactor(&self, r: &Redactor) {
        crate::redact::register(r);
    }
}

/// A stderr writer that masks secrets line by line.
pub struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let masked = crate::redact::redact_output(&text);
        std::io::stderr().write_all(masked.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for LogHandle {
    type Writer = RedactingStderr;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingStderr
    }
}

/// Install the global subscriber. `CN_RUN_LOG` (an EnvFilter) wins over `-v`.
pub fn init(args: &LogArgs) -> LogHandle {
    let live = (!args.quiet && crate::report::live::wanted()).then(crate::report::live::display);
    let handle = LogHandle {
        quiet: args.quiet,
        live,
        started: Some(std::time::SystemTime::now()),
        telemetry: None,
        shared: false,
    };
    let default = match args.verbose {
        0 => "warn",
        1 => "info,cn_run=info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_env("CN_RUN_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(handle.clone())
        .with_target(false)
        .with_ansi(false)
        .try_init();
    handle
}

/// A line for a person watching the run (progress), unless `--quiet`.
pub fn progress(handle: &LogHandle, line: &str) {
    if handle.quiet {
        return;
    }
    outcome(handle, line);
}

/// Text for stderr that `--quiet` keeps too (how a run ended), written in one piece so
/// no other job's line lands inside it.
pub fn outcome(handle: &LogHandle, text: &str) {
    let mut w = handle.make_writer();
    let text = if text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    };
    let _ = w.write_all(text.as_bytes());
}
