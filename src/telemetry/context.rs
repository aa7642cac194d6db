//! The run's place in a distributed trace: the caller's W3C `traceparent`/`tracestate`
//! (`TRACEPARENT`/`TRACESTATE`, as CI systems and `otel-cli` set them), the run's trace id,
//! and the ids of the run's spans.
//!
//! Span ids are derived, not drawn: a hash of the trace id, a per-run salt and what the span
//! stands for (`mcp` + a call id, …). The fold that builds spans from events after the fact
//! and the MCP client that passes the trace context at call time compute the same id, so a
//! server's spans hang under the span cn-run exports for that call.

use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
use sha2::{Digest, Sha256};

/// A parsed W3C `traceparent` header (with the `tracestate` that came beside it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub flags: TraceFlags,
    pub state: Option<String>,
}

impl TraceParent {
    /// Parses `traceparent` (version `00`, or a later version's first four fields as the
    /// recommendation says); `None` for anything malformed or all-zero ids.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let text = traceparent.trim();
        let mut parts = text.splitn(5, '-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let rest = parts.next();
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || (version == "00" && rest.is_some()) {
            return None;
        }
        if !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
            return None;
        }
        let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & 1);
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= 512 && s.is_ascii())
            .map(str::to_owned);
        Some(TraceParent {
            trace_id,
            span_id,
            flags,
            state,
        })
    }
}

/// The trace of one run: the caller's trace when it gave one, else a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTrace {
    pub trace_id: TraceId,
    /// The caller's span (`TRACEPARENT`), the parent of the run's agent span.
    pub parent: Option<SpanId>,
    pub flags: TraceFlags,
    pub state: Option<String>,
    /// Whether cn-run exports this run's spans (else MCP servers get the caller's context).
    pub exported: bool,
    salt: [u8; 8],
}

impl RunTrace {
    /// A run's trace under `parent` (or a new trace), its span ids salted with `salt`.
    pub fn new(parent: Option<&TraceParent>, exported: bool, salt: [u8; 8]) -> Self {
        if let Some(p) = parent {
            RunTrace {
                trace_id: p.trace_id,
                parent: Some(p.span_id),
                flags: p.flags,
                state: p.state.clone(),
                exported,
                salt,
            }
        } else {
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&fastrand::u64(1..).to_be_bytes());
            id[8..].copy_from_slice(&fastrand::u64(..).to_be_bytes());
            RunTrace {
                trace_id: TraceId::from_bytes(id),
                parent: None,
                flags: TraceFlags::SAMPLED,
                state: None,
                exported,
                salt,
            }
        }
    }

    /// The run's trace id as 32 hex digits (result.json's `trace_id`).
    pub fn trace_hex(&self) -> String {
        self.trace_id.to_string()
    }

    /// Whether the run's spans are recorded (the caller's sampling decision, or yes).
    pub fn sampled(&self) -> bool {
        self.flags.is_sampled()
    }

    /// The id of the span `kind`/`key` of this run (never the invalid all-zero id).
    pub fn span_id(&self, kind: &str, key: &str) -> SpanId {
        let mut hash = Sha256::new();
        hash.update(self.trace_id.to_bytes());
        hash.update(self.salt);
        hash.update(kind.as_bytes());
        hash.update([0]);
        hash.update(key.as_bytes());
        let digest = hash.finalize();
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest[..8]);
        if id == [0; 8] {
            id[7] = 1;
        }
        SpanId::from_bytes(id)
    }

    /// The span of an MCP call: its key in [`RunTrace::span_id`].
    pub fn mcp_span(&self, call_id: &str) -> SpanId {
        self.span_id("mcp", call_id)
    }

    /// What an MCP server is told for call `call_id`: `traceparent` naming cn-run's span of
    /// that call when cn-run exports it, else the caller's own span (`None` without either),
    /// and `tracestate` as it came.
    pub fn for_mcp_call(&self, call_id: &str) -> Option<(String, Option<String>)> {
        let span = match (self.exported, self.parent) {
            (true, _) => self.mcp_span(call_id),
            (false, Some(parent)) => parent,
            (false, None) => return None,
        };
        let header = format!("00-{}-{}-{:02x}", self.trace_id, span, self.flags.to_u8());
        Some((header, self.state.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_w3c_traceparent_is_read_and_malformed_ones_are_not() {
        let p = TraceParent::parse(GOOD, Some("rojo=00f067aa0ba902b7")).unwrap();
        assert_eq!(p.trace_id.to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(p.span_id.to_string(), "b7ad6b7169203331");
        assert!(p.flags.is_sampled());
        assert_eq!(p.state.as_deref(), Some("rojo=00f067aa0ba902b7"));
        let later = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-what-ever";
        assert!(!TraceParent::parse(later, None).unwrap().flags.is_sampled());
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
        ] {
            assert_eq!(TraceParent::parse(bad, None), None, "{bad}");
        }
    }

    #[test]
    fn span_ids_are_the_same_for_the_same_key_and_differ_by_key_and_run() {
        let parent = TraceParent::parse(GOOD, None);
        let a = RunTrace::new(parent.as_ref(), true, [1; 8]);
        let b = RunTrace::new(parent.as_ref(), true, [2; 8]);
        assert_eq!(a.trace_id, b.trace_id);
        assert_eq!(a.mcp_span("call_1"), a.mcp_span("call_1"));
        assert_ne!(a.mcp_span("call_1"), a.mcp_span("call_2"));
        assert_ne!(a.mcp_span("call_1"), b.mcp_span("call_1"));
        assert_ne!(a.span_id("tool", "call_1"), a.mcp_span("call_1"));
    }

    #[test]
    fn an_mcp_server_gets_cn_runs_span_when_exported_else_the_callers() {
        let parent = TraceParent::parse(GOOD, Some("k=v"));
        let on = RunTrace::new(parent.as_ref(), true, [3; 8]);
        let (header, state) = on.for_mcp_call("c").unwrap();
        assert_eq!(
            header,
            format!(
                "00-0af7651916cd43dd8448eb211c80319c-{}-01",
                on.mcp_span("c")
            )
        );
        assert_eq!(state.as_deref(), Some("k=v"));
        let off = RunTrace::new(parent.as_ref(), false, [3; 8]);
        assert_eq!(off.for_mcp_call("c").unwrap().0, GOOD);
        assert_eq!(RunTrace::new(None, false, [3; 8]).for_mcp_call("c"), None);
        let fresh = RunTrace::new(None, true, [3; 8]);
        assert!(fresh.sampled() && fresh.trace_id != TraceId::INVALID);
    }
}
