//! A loopback OpenTelemetry collector for the telemetry tests: it takes OTLP over
//! `http/protobuf` (HTTP/1.1 `POST /v1/{traces,metrics,logs}`) or gRPC (HTTP/2 with the
//! five-byte message framing and a `grpc-status` trailer), decodes every request with the
//! official OpenTelemetry protobuf definitions (the `opentelemetry-proto` crate's generated
//! types) and keeps what it decoded. A hanging collector accepts connections and never
//! answers.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::metrics::v1::Metric;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// The wire protocol a collector speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    HttpProtobuf,
    Grpc,
}

impl Wire {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`'s value for it.
    pub fn protocol(self) -> &'static str {
        match self {
            Wire::HttpProtobuf => "http/protobuf",
            Wire::Grpc => "grpc",
        }
    }
}

/// Everything a collector decoded.
#[derive(Debug, Default, Clone)]
pub struct Received {
    pub traces: Vec<ExportTraceServiceRequest>,
    pub metrics: Vec<ExportMetricsServiceRequest>,
    pub logs: Vec<ExportLogsServiceRequest>,
    /// The headers of each request (lowercase names), and its path.
    pub requests: Vec<(String, BTreeMap<String, String>)>,
}

impl Received {
    /// Every span, with its resource's attributes.
    pub fn spans(&self) -> Vec<(BTreeMap<String, String>, Span)> {
        let mut out = Vec::new();
        for request in &self.traces {
            for rs in &request.resource_spans {
                let resource = attrs(rs.resource.as_ref().map_or(&[][..], |r| &r.attributes));
                for ss in &rs.scope_spans {
                    out.extend(ss.spans.iter().map(|s| (resource.clone(), s.clone())));
                }
            }
        }
        out
    }

    /// Every metric by name (the last export of each, which holds the whole run under
    /// cumulative temporality).
    pub fn metrics(&self) -> BTreeMap<String, Metric> {
        let mut out = BTreeMap::new();
        for request in &self.metrics {
            for rm in &request.resource_metrics {
                for sm in &rm.scope_metrics {
                    for m in &sm.metrics {
                        out.insert(m.name.clone(), m.clone());
                    }
                }
            }
        }
        out
    }

    /// The resource attributes of the first metrics export.
    pub fn metric_resource(&self) -> BTreeMap<String, String> {
        self.metrics
            .iter()
            .flat_map(|r| &r.resource_metrics)
            .find_map(|rm| rm.resource.as_ref().map(|r| attrs(&r.attributes)))
            .unwrap_or_default()
    }

    /// Every log record.
    pub fn log_records(&self) -> Vec<LogRecord> {
        self.logs
            .iter()
            .flat_map(|r| &r.resource_logs)
            .flat_map(|rl| &rl.scope_logs)
            .flat_map(|sl| sl.log_records.clone())
            .collect()
    }
}

/// An attribute value as text (arrays as their items joined by commas).
pub fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::ArrayValue(a)) => a
            .values
            .iter()
            .map(|v| text(Some(v)))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// Attributes as a map of texts.
pub fn attrs(list: &[KeyValue]) -> BTreeMap<String, String> {
    list.iter()
        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
        .collect()
}

/// A loopback collector, serving until dropped.
pub struct Collector {
    pub addr: SocketAddr,
    pub wire: Wire,
    received: Arc<Mutex<Received>>,
    /// Connections a hanging collector accepted.
    accepted: Arc<AtomicUsize>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Collector {
    /// A collector that decodes and answers every export.
    pub fn start(wire: Wire) -> Collector {
        Self::serve(wire, false)
    }

    /// A collector that accepts connections and never answers.
    pub fn hanging() -> Collector {
        Self::serve(Wire::HttpProtobuf, true)
    }

    fn serve(wire: Wire, hang: bool) -> Collector {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Received::default()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (store, count) = (received.clone(), accepted.clone());
        runtime.spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                if hang {
                    held.push(stream);
                    continue;
                }
                tokio::spawn(connection(stream, wire, store.clone()));
            }
        });
        Collector {
            addr,
            wire,
            received,
            accepted,
            runtime: Some(runtime),
        }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for it.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn received(&self) -> Received {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

type Body = BoxBody<Bytes, Infallible>;

async fn connection(stream: tokio::net::TcpStream, wire: Wire, store: Arc<Mutex<Received>>) {
    let io = TokioIo::new(stream);
    let service = hyper::service::service_fn(move |req| handle(req, wire, store.clone()));
    let _ = match wire {
        Wire::HttpProtobuf => {
            hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await
        }
        Wire::Grpc => {
            hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(io, service)
                .await
        }
    };
}

async fn handle(
    req: Request<Incoming>,
    wire: Wire,
    store: Arc<Mutex<Received>>,
) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_owned();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let message = match wire {
        Wire::HttpProtobuf => body.to_vec(),
        // gRPC: a compressed flag, a four-byte length, the message.
        Wire::Grpc => body.get(5..).unwrap_or_default().to_vec(),
    };
    let mut received = store.lock().unwrap_or_else(PoisonError::into_inner);
    received.requests.push((path.clone(), headers));
    let answer = if path.ends_with("/v1/traces") || path.ends_with("TraceService/Export") {
        received
            .traces
            .push(ExportTraceServiceRequest::decode(&message[..]).expect("traces decode"));
        ExportTraceServiceResponse::default().encode_to_vec()
    } else if path.ends_with("/v1/metrics") || path.ends_with("MetricsService/Export") {
        received
            .metrics
            .push(ExportMetricsServiceRequest::decode(&message[..]).expect("metrics decode"));
        ExportMetricsServiceResponse::default().encode_to_vec()
    } else if path.ends_with("/v1/logs") || path.ends_with("LogsService/Export") {
        received
            .logs
            .push(ExportLogsServiceRequest::decode(&message[..]).expect("logs decode"));
        ExportLogsServiceResponse::default().encode_to_vec()
    } else {
        let empty = Full::new(Bytes::new()).boxed();
        return Ok(Response::builder().status(404).body(empty).unwrap());
    };
    drop(received);
    Ok(match wire {
        Wire::HttpProtobuf => Response::builder()
            .header("content-type", "application/x-protobuf")
            .body(Full::new(Bytes::from(answer)).boxed())
            .unwrap(),
        Wire::Grpc => {
            let mut framed = vec![0u8];
            framed.extend((answer.len() as u32).to_be_bytes());
            framed.extend(answer);
            let mut trailers = hyper::HeaderMap::new();
            trailers.insert("grpc-status", "0".parse().unwrap());
            let frames = vec![
                Ok::<_, Infallible>(Frame::data(Bytes::from(framed))),
                Ok(Frame::trailers(trailers)),
            ];
            Response::builder()
                .header("content-type", "application/grpc")
                .body(StreamBody::new(futures_util::stream::iter(frames)).boxed())
                .unwrap()
        }
    })
}
