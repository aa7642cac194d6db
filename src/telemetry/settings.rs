//! What the standard OpenTelemetry environment asks for: which signals go out (off unless
//! an OTLP endpoint is set; `OTEL_SDK_DISABLED=true` and `OTEL_<SIGNAL>_EXPORTER=none` turn
//! them off), over which protocol (`http/protobuf` unless `grpc`), how long an export may
//! take, whether content is captured, and the caller's trace context.
//!
//! Endpoints, headers and per-signal timeouts are read by the OTLP exporter itself from the
//! same variables; this module decides only what the exporter cannot.

use std::time::Duration;

use super::context::TraceParent;

/// One of the three OTLP signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Metrics,
    Logs,
}

impl Signal {
    pub const ALL: [Signal; 3] = [Signal::Traces, Signal::Metrics, Signal::Logs];

    /// The signal's part of its variables' names (`TRACES` in `OTEL_EXPORTER_OTLP_TRACES_…`).
    pub fn upper(self) -> &'static str {
        match self {
            Signal::Traces => "TRACES",
            Signal::Metrics => "METRICS",
            Signal::Logs => "LOGS",
        }
    }

    /// The path an OTLP/HTTP endpoint gets for this signal.
    pub fn path(self) -> &'static str {
        match self {
            Signal::Traces => "v1/traces",
            Signal::Metrics => "v1/metrics",
            Signal::Logs => "v1/logs",
        }
    }
}

/// The wire protocol of one signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    HttpProtobuf,
    Grpc,
}

/// The telemetry a process sends, from its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Each enabled signal with its protocol and endpoint (for messages).
    pub signals: Vec<(Signal, Protocol, String)>,
    /// How long one export may take (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by default); also
    /// the bound on the flush at exit.
    pub timeout: Duration,
    /// Prompts, answers, tool arguments and output on spans and logs
    /// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`; a job can opt in too).
    pub capture_content: bool,
    /// The most bytes of one captured text (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`).
    pub value_limit: usize,
    /// The caller's trace (`TRACEPARENT`, `TRACESTATE`).
    pub parent: Option<TraceParent>,
    /// What was set but cannot be honoured, in words.
    pub warnings: Vec<String>,
}

/// Content is cut here unless `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` says otherwise.
pub const DEFAULT_VALUE_LIMIT: usize = 8 * 1024;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl Settings {
    /// The settings `var` (an environment lookup) gives.
    pub fn read(var: &dyn Fn(&str) -> Option<String>) -> Settings {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let mut warnings = Vec::new();
        let disabled = get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim() == "true");
        let signals = if disabled {
            Vec::new()
        } else {
            Signal::ALL
                .into_iter()
                .filter_map(|s| signal(s, &get, &mut warnings))
                .collect()
        };
        let timeout = get("OTEL_EXPORTER_OTLP_TIMEOUT")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let capture_content = get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"));
        let value_limit = get("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_VALUE_LIMIT);
        let parent = get("TRACEPARENT").and_then(|tp| {
            let parsed = TraceParent::parse(&tp, get("TRACESTATE").as_deref());
            if parsed.is_none() {
                warnings.push(format!(
                    "TRACEPARENT `{}` is not a W3C traceparent; the run starts a trace of its own",
                    tp.trim()
                ));
            }
            parsed
        });
        Settings {
            signals,
            timeout,
            capture_content,
            value_limit,
            parent,
            warnings,
        }
    }

    pub fn enabled(&self, signal: Signal) -> bool {
        self.signals.iter().any(|(s, _, _)| *s == signal)
    }
}

/// Whether `name` configures OpenTelemetry or carries the caller's trace context: no
/// command, check or MCP server a run starts inherits it.
pub fn is_telemetry_var(name: &str) -> bool {
    name.starts_with("OTEL_") || matches!(name, "TRACEPARENT" | "TRACESTATE")
}

/// The values of the OTLP header variables (`k=v,k2=v2`): collector credentials, masked in
/// every output like the provider key.
pub fn header_values(var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names = Signal::ALL
        .iter()
        .map(|s| format!("OTEL_EXPORTER_OTLP_{}_HEADERS", s.upper()))
        .chain(["OTEL_EXPORTER_OTLP_HEADERS".to_owned()]);
    names
        .filter_map(|n| var(&n))
        .flat_map(|text| {
            text.split(',')
                .filter_map(|pair| pair.split_once('=').map(|(_, v)| v.trim().to_owned()))
                .collect::<Vec<_>>()
        })
        .flat_map(|v| {
            let decoded = percent_encoding::percent_decode_str(&v)
                .decode_utf8_lossy()
                .into_owned();
            [v, decoded]
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// `signal`'s protocol and endpoint, when an endpoint is set for it and its exporter is not
/// `none`.
fn signal(
    s: Signal,
    get: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Option<(Signal, Protocol, String)> {
    let upper = s.upper();
    let exporter = get(&format!("OTEL_{upper}_EXPORTER"));
    if exporter.as_deref().map(str::trim) == Some("none") {
        return None;
    }
    let own = get(&format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT"));
    let general = get("OTEL_EXPORTER_OTLP_ENDPOINT");
    let protocol_var = get(&format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL"))
        .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let protocol = match protocol_var.as_deref().map(str::trim) {
        None | Some("http/protobuf") => Protocol::HttpProtobuf,
        Some("grpc") => Protocol::Grpc,
        Some(other) => {
            warnings.push(format!(
                "OTLP protocol `{other}` is not supported (grpc or http/protobuf); {} go as \
                 http/protobuf",
                s.upper().to_ascii_lowercase()
            ));
            Protocol::HttpProtobuf
        }
    };
    let endpoint = match (own, general) {
        (Some(own), _) => own.trim().to_owned(),
        (None, Some(general)) => match protocol {
            Protocol::Grpc => general.trim().to_owned(),
            Protocol::HttpProtobuf => {
                format!("{}/{}", general.trim().trim_end_matches('/'), s.path())
            }
        },
        (None, None) => return None,
    };
    Some((s, protocol, endpoint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Settings {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::read(&move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn nothing_is_sent_unless_an_endpoint_is_set() {
        assert!(read(&[]).signals.is_empty());
        assert!(read(&[("OTEL_SERVICE_NAME", "x")]).signals.is_empty());
        let all = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")]);
        assert_eq!(
            all.signals,
            [
                (
                    Signal::Traces,
                    Protocol::HttpProtobuf,
                    "http://c:4318/v1/traces".to_owned()
                ),
                (
                    Signal::Metrics,
                    Protocol::HttpProtobuf,
                    "http://c:4318/v1/metrics".to_owned()
                ),
                (
                    Signal::Logs,
                    Protocol::HttpProtobuf,
                    "http://c:4318/v1/logs".to_owned()
                ),
            ]
        );
        let disabled = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ]);
        assert!(disabled.signals.is_empty());
    }

    #[test]
    fn per_signal_endpoints_protocols_and_exporters_are_honoured() {
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4318/custom"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:4317"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
        ]);
        assert_eq!(
            s.signals,
            [
                (
                    Signal::Traces,
                    Protocol::HttpProtobuf,
                    "http://t:4318/custom".to_owned()
                ),
                (Signal::Metrics, Protocol::Grpc, "http://m:4317".to_owned()),
            ]
        );
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_LOGS_EXPORTER", "none"),
        ]);
        assert!(s.enabled(Signal::Traces) && s.enabled(Signal::Metrics));
        assert!(!s.enabled(Signal::Logs));
        assert!(
            s.signals
                .iter()
                .all(|(_, p, e)| *p == Protocol::Grpc && e == "http://c:4317")
        );
        let json = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ]);
        assert!(
            json.signals
                .iter()
                .all(|(_, p, _)| *p == Protocol::HttpProtobuf)
        );
        assert_eq!(json.warnings.len(), 3);
    }

    #[test]
    fn header_values_are_secrets_and_telemetry_variables_are_known() {
        let vars = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_HEADERS" => {
                Some("x-api-key=abc%20def,authorization=Bearer t0k".to_owned())
            }
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS" => Some("x-team=zzz".to_owned()),
            _ => None,
        };
        let values = header_values(&vars);
        for v in ["abc%20def", "abc def", "Bearer t0k", "zzz"] {
            assert!(values.contains(&v.to_owned()), "{v} in {values:?}");
        }
        assert!(is_telemetry_var("OTEL_EXPORTER_OTLP_ENDPOINT"));
        assert!(is_telemetry_var("TRACEPARENT") && is_telemetry_var("TRACESTATE"));
        assert!(!is_telemetry_var("PATH") && !is_telemetry_var("MY_OTEL_X"));
    }

    #[test]
    fn timeout_content_limit_and_parent_come_from_their_variables() {
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1500"),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"),
            ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100"),
            (
                "TRACEPARENT",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
        ]);
        assert_eq!(s.timeout, Duration::from_millis(1500));
        assert!(s.capture_content);
        assert_eq!(s.value_limit, 100);
        assert!(s.parent.is_some());
        let d = read(&[("TRACEPARENT", "garbage")]);
        assert_eq!(d.timeout, Duration::from_secs(10));
        assert!(!d.capture_content && d.parent.is_none());
        assert_eq!(d.warnings.len(), 1);
    }
}
