//! Server-sent events, as both HTTP providers receive them: an incremental decoder (bytes
//! in, events out), the HTTP transport that feeds it, and the classification of HTTP
//! failures into [`ProviderError`]s.
//!
//! The decoder exists because response bodies arrive in arbitrary pieces: a chunk may end in
//! the middle of a line, of a `\r\n` pair or of a UTF-8 character. It keeps the unfinished
//! line and the event being built between calls, and refuses events larger than a limit so a
//! hostile server cannot make it buffer without bound.

pub(crate) mod classify;
pub(crate) mod endpoint;
pub(crate) mod http;
pub(crate) mod not_a_stream;
pub(crate) mod wait;

use super::ProviderError;

/// One dispatched event: the `event:` name if the server sent one, and the `data:` lines
/// joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

/// Incremental SSE decoder. Handles `\n` and `\r\n` line ends, multi-line `data:`, comments
/// (`:` lines), the optional space after the colon and a leading byte-order mark.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    /// How far `buf` has been searched for a newline without finding one.
    scanned: usize,
    event: Option<String>,
    data: String,
    has_data: bool,
    started: bool,
    max_event_bytes: usize,
}

impl SseDecoder {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        SseDecoder {
            buf: Vec::new(),
            scanned: 0,
            event: None,
            data: String::new(),
            has_data: false,
            started: false,
            max_event_bytes,
        }
    }

    /// Feed the next piece of the body; returns the events it completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        self.buf.extend_from_slice(bytes);
        if !self.started {
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            if self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return Ok(Vec::new());
            }
            self.started = true;
            if self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
            }
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut search = self.scanned;
        while let Some(pos) = self.buf[search..].iter().position(|b| *b == b'\n') {
            let end = search + pos;
            let line = trim_cr(&self.buf[start..end]);
            let line = String::from_utf8_lossy(line).into_owned();
            self.line(&line, &mut out)?;
            start = end + 1;
            search = start;
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() + self.data.len() > self.max_event_bytes {
            return Err(self.too_large());
        }
        Ok(out)
    }

    /// The body ended: a last line without a newline and an event without the closing blank
    /// line are still delivered (some servers omit them after the final event).
    pub(crate) fn finish(&mut self) -> Result<Vec<SseEvent>, ProviderError> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(trim_cr(&rest)).into_owned();
            self.line(&line, &mut out)?;
        }
        self.scanned = 0;
        self.line("", &mut out)?;
        Ok(out)
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event = None;
            self.has_data = false;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > self.max_event_bytes {
                    return Err(self.too_large());
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn too_large(&self) -> ProviderError {
        ProviderError::Decode(format!(
            "a server-sent event exceeds {} bytes",
            self.max_event_bytes
        ))
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::{SseDecoder, SseEvent};

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    const SAMPLE: &str = "\u{feff}: keep-alive\r\nevent: message_start\r\ndata: {\"a\":\"é€\"}\r\n\r\n\
        data: line one\ndata:line two\n\n: comment only\n\nid: 7\nretry: 10\ndata: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            ev(Some("message_start"), "{\"a\":\"é€\"}"),
            ev(None, "line one\nline two"),
            ev(None, "[DONE]"),
        ]
    }

    fn decode_in_pieces(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new(1 << 20);
        let mut out = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
            out.extend(decoder.push(&bytes[from..cut]).unwrap());
            from = cut;
        }
        out.extend(decoder.finish().unwrap());
        out
    }

    #[test]
    fn every_single_split_point_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(decode_in_pieces(bytes, &[cut]), expected(), "cut at {cut}");
        }
    }

    #[test]
    fn every_pair_of_split_points_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                assert_eq!(decode_in_pieces(bytes, &[a, b]), expected(), "cuts {a},{b}");
            }
        }
    }

    #[test]
    fn byte_by_byte_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(decode_in_pieces(bytes, &cuts), expected());
    }

    #[test]
    fn a_last_event_without_blank_line_is_delivered_at_the_end() {
        let mut decoder = SseDecoder::new(1024);
        assert!(decoder.push(b"data: tail").unwrap().is_empty());
        assert_eq!(decoder.finish().unwrap(), vec![ev(None, "tail")]);
    }

    #[test]
    fn an_empty_data_line_still_dispatches_an_event() {
        let mut decoder = SseDecoder::new(1024);
        assert_eq!(decoder.push(b"data:\n\n").unwrap(), vec![ev(None, "")]);
        assert!(decoder.push(b"event: ping\n\n").unwrap().is_empty());
    }

    #[test]
    fn an_oversized_event_is_refused_even_without_a_newline() {
        let mut decoder = SseDecoder::new(64);
        let err = decoder.push(&[b'x'; 100]).unwrap_err();
        assert_eq!(err.kind(), "decode");
        let mut decoder = SseDecoder::new(64);
        let many_lines = "data: 0123456789\n".repeat(10);
        assert!(decoder.push(many_lines.as_bytes()).is_err());
    }
}
