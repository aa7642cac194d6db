//! A body sent as an event stream that is none: a proxy's or a captive portal's web page with
//! `content-type: text/event-stream`, or an HTML page framed in `data:` lines. The SSE reader
//! skips lines it does not know, so such a page used to end as "stream ended early" (or "a
//! stream chunk is not JSON"), and its words — which say what went wrong — were lost. Here the
//! first bytes are kept until an event arrives, and an error quotes the page's title and text,
//! key removed and cut short.

use super::classify::{error_in_body, scrub, short};
use crate::provider::ProviderError;
use crate::secret::Secret;

/// How much of a body is kept while no event has arrived.
const PREVIEW_BYTES: usize = 64 << 10;

/// The SSE field names: a line that is none of these (nor a comment) is not a stream's.
const FIELDS: &[&str] = &["data", "event", "id", "retry"];

/// The first bytes of a body that has produced no event yet.
#[derive(Debug, Default)]
pub(crate) struct Preview {
    bytes: Vec<u8>,
    /// An event arrived: the body is a stream, nothing more is kept.
    streaming: bool,
}

impl Preview {
    /// Keeps the start of `chunk` while no event has arrived.
    pub(crate) fn keep(&mut self, chunk: &[u8]) {
        if self.streaming {
            return;
        }
        let room = PREVIEW_BYTES.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
    }

    /// An event arrived.
    pub(crate) fn streaming(&mut self) {
        self.streaming = true;
        self.bytes = Vec::new();
    }

    /// The error for a body that is not a stream: a whole web page (at its end, or once its
    /// closing tag arrived), or any other text when the body ended without an event. `None`
    /// while it may still be a stream.
    pub(crate) fn verdict(&self, ended: bool, secret: Option<&Secret>) -> Option<ProviderError> {
        if self.streaming || self.bytes.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.bytes);
        if looks_like_html(&text) {
            let whole = ended || text.to_ascii_lowercase().contains("</html>");
            return whole.then(|| page_error(&text, secret));
        }
        (ended && !is_sse(&text)).then(|| {
            ProviderError::Decode(scrub(
                &format!(
                    "expected an event stream, got: \"{}\"",
                    short(&one_line(&text))
                ),
                secret,
            ))
        })
    }
}

/// Whether `text` starts like an HTML page.
pub(crate) fn looks_like_html(text: &str) -> bool {
    let start = text.trim_start();
    let head = start.get(..start.len().min(256)).unwrap_or(start);
    let head = head.to_ascii_lowercase();
    head.starts_with("<!doctype") || head.starts_with("<html") || head.contains("<html")
}

/// Whether every line of `text` is an SSE comment or field.
fn is_sse(text: &str) -> bool {
    text.lines().map(str::trim_end).all(|line| {
        line.is_empty()
            || line.starts_with(':')
            || FIELDS
                .iter()
                .any(|f| line.split(':').next() == Some(f) || line == *f)
    })
}

/// The error for a web page where a stream (or a JSON event) was expected: its visible
/// words. Not retried: the same request gets the same page.
pub(crate) fn page_error(html: &str, secret: Option<&Secret>) -> ProviderError {
    let words = error_in_body(html.as_bytes(), "text/html").message;
    ProviderError::BadRequest {
        status: 200,
        message: scrub(
            &format!(
                "expected an event stream, got a web page: \"{words}\"; check api_base and any \
                 proxy in between"
            ),
            secret,
        ),
    }
}

/// The error for an event whose data is no JSON: a web page's words, or the data itself,
/// cut short.
pub(crate) fn data_error(
    data: &str,
    what: &str,
    parse: &str,
    secret: Option<&Secret>,
) -> ProviderError {
    if looks_like_html(data) {
        return page_error(data, secret);
    }
    ProviderError::Decode(scrub(
        &format!(
            "a stream {what} is not JSON ({parse}): \"{}\"",
            short(&one_line(data))
        ),
        secret,
    ))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!DOCTYPE html>\n<html><head><title>Sign in to Acme Wi-Fi</title>\
        <script>var k='sk-secret-123';</script></head>\n<body><h1>Access denied</h1>\
        <p>Your session expired. Key sk-secret-123 is not valid here.</p></body></html>\n";

    fn secret() -> Secret {
        Secret::new("sk-secret-123".to_owned())
    }

    #[test]
    fn a_web_page_sent_as_a_stream_keeps_its_words_without_the_key() {
        let mut preview = Preview::default();
        preview.keep(&PAGE.as_bytes()[..40]);
        assert!(preview.verdict(false, None).is_none(), "half a page waits");
        preview.keep(&PAGE.as_bytes()[40..]);
        let err = preview.verdict(false, Some(&secret())).unwrap();
        let text = err.to_string();
        assert!(text.contains("Sign in to Acme Wi-Fi"), "{text}");
        assert!(text.contains("Your session expired."), "{text}");
        assert!(!text.contains("sk-secret-123"), "{text}");
        assert!(!text.contains("var k"), "scripts are not words: {text}");
        assert!(!err.is_retryable());
    }

    #[test]
    fn plain_text_is_quoted_at_the_end_and_a_stream_of_comments_is_not_text() {
        let mut preview = Preview::default();
        preview.keep(b"upstream connect error or disconnect/reset before headers\n");
        assert!(preview.verdict(false, None).is_none());
        let text = preview.verdict(true, None).unwrap().to_string();
        assert!(text.contains("upstream connect error"), "{text}");
        let mut comments = Preview::default();
        comments.keep(b": keep-alive\n\n: ping\nretry: 100\n");
        assert!(comments.verdict(true, None).is_none());
        let mut streaming = Preview::default();
        streaming.keep(PAGE.as_bytes());
        streaming.streaming();
        assert!(streaming.verdict(true, None).is_none());
    }

    #[test]
    fn html_framed_as_data_lines_keeps_its_words() {
        let framed = PAGE.lines().collect::<Vec<_>>().join("\n");
        let text = data_error(&framed, "chunk", "expected value", Some(&secret())).to_string();
        assert!(text.contains("Access denied"), "{text}");
        assert!(!text.contains("sk-secret-123"), "{text}");
        let text = data_error("Bad Gateway", "chunk", "expected value", None).to_string();
        assert!(text.contains("\"Bad Gateway\""), "{text}");
    }
}
