//! Transport errors in words a user can act on: the SDK's messages name Rust types
//! (`Transport [rmcp::transport::worker::WorkerTransport<…>] error`) and nest their causes; a
//! message here keeps what happened and the root cause, without type names.

use std::error::Error;

/// `err` and its causes as one sentence fragment with no Rust type names.
pub(crate) fn error_words(err: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = current {
        let text = plain(&e.to_string());
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    match parts.as_slice() {
        [] => "an unknown error".to_owned(),
        [only] => only.clone(),
        [first, .., last] => format!("{first} ({last})"),
    }
}

/// `text` without bracketed or angle-bracketed Rust paths and debug dumps.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut segment = String::new();
    for c in text.chars() {
        match c {
            '[' | '<' => {
                depth += 1;
                segment.push(c);
            }
            ']' | '>' if depth > 0 => {
                depth -= 1;
                segment.push(c);
                if depth == 0 {
                    if !segment.contains("::") {
                        out.push_str(&segment);
                    }
                    segment.clear();
                }
            }
            _ if depth > 0 => segment.push(c),
            _ => out.push(c),
        }
    }
    out.push_str(&segment);
    let out = match out.find(" { ") {
        Some(at) if out[..at].contains('(') || out[at..].contains("kind:") => out[..at].to_owned(),
        _ => out,
    };
    let out = out
        .replace("Transport  error: ", "")
        .replace("Send message error ", "");
    let out = out.trim().trim_end_matches(',').trim();
    let out = out
        .replace("Client error: ", "")
        .replace(
            ", when send initialize request",
            " to the initialize request",
        )
        .replace(", when send ", " to the ");
    fix_io(&out)
}

/// The operating system's wording for the usual connection failures.
fn fix_io(text: &str) -> String {
    text.replace("(os error 111)", "")
        .replace("Connection refused", "connection refused")
        .trim()
        .to_owned()
}

/// What to tell a user whose HTTP server failed the streamable-HTTP handshake in a way that
/// suggests the older HTTP+SSE transport (an `/sse` endpoint, or a 404/405 to the POST).
pub(crate) fn legacy_sse_hint(url: &str, words: &str) -> Option<String> {
    let path_says_sse = url.trim_end_matches('/').ends_with("/sse");
    let status_says_so = ["HTTP 404", "HTTP 405", "event-stream"]
        .iter()
        .any(|s| words.contains(s));
    (path_says_sse || status_says_so).then(|| {
        "this looks like the older HTTP+SSE transport (protocol 2024-11-05), which cn-run does \
         not speak: point `url` at the server's streamable HTTP endpoint (often /mcp), run the \
         server over stdio with `command:`, or bridge it to stdio with a proxy such as \
         `npx mcp-remote URL`"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_dropped() {
        let text = "the MCP handshake failed: Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::X<reqwest::Client>>] error: Client error: error sending request for url (http://h/mcp), when send initialize request";
        let out = plain(text);
        assert!(!out.contains("::"), "{out}");
        assert!(
            out.contains("error sending request for url (http://h/mcp)"),
            "{out}"
        );
    }

    #[test]
    fn the_sdk_s_request_wording_reads_as_english() {
        let out = plain("HTTP 501, when send initialize request");
        assert_eq!(out, "HTTP 501 to the initialize request");
        let out = plain("unexpected server response: HTTP 404, when send initialized notification");
        assert!(
            out.ends_with("HTTP 404 to the initialized notification"),
            "{out}"
        );
    }

    #[test]
    fn debug_dumps_are_cut() {
        let out = plain("Client(reqwest::Error { kind: Request, url: \"x\" })");
        assert!(!out.contains("kind:"), "{out}");
    }

    #[test]
    fn sse_hint_for_sse_paths_and_404s() {
        assert!(legacy_sse_hint("http://h/sse", "x").is_some());
        assert!(legacy_sse_hint("http://h/mcp", "unexpected server response: HTTP 404").is_some());
        assert!(legacy_sse_hint("http://h/mcp", "connection refused").is_none());
    }
}
