//! The stdout of a stdio server, with one promise added: a message longer than the line limit
//! ends the call it answers at once. The SDK drops an over-long line, so the call would wait
//! for an answer that never comes (until `call_timeout`); here the line is replaced by an
//! error answer to the same request id, which the caller sees straight away.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream};

/// The longest message a stdio server may send: one JSON-RPC line of 16 MiB (the SDK's own
/// limit, less the newline).
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024 - 1;
/// The JSON-RPC error code of the answer that replaces an over-long one.
pub(crate) const TOO_LARGE_CODE: i32 = -32_099;
/// Bytes kept from each end of an over-long line, to find its request id.
const EDGE: usize = 512;

/// Names of the tools a server lists with `execution.taskSupport: "required"` (they can only
/// be called as tasks, which cn-run does not do). The SDK drops that field, so the guard,
/// which sees every message, notes them from the tool list as it passes.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskOnly(Arc<Mutex<HashSet<String>>>);

impl TaskOnly {
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    }

    pub(crate) fn note(&self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(line) else {
            return;
        };
        let tools = message["result"]["tools"].as_array().into_iter().flatten();
        let required = tools
            .filter(|t| t["execution"]["taskSupport"] == "required")
            .filter_map(|t| t["name"].as_str().map(str::to_owned));
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(required);
    }
}

/// Tool lists longer than this are not searched for task-only tools.
const TOOL_LIST_BYTES: usize = 4 * 1024 * 1024;

/// `stdout` filtered as described above; the returned stream is what the SDK reads.
pub(crate) fn guard(
    stdout: impl AsyncRead + Unpin + Send + 'static,
    server: &str,
    task_only: TaskOnly,
) -> DuplexStream {
    let (theirs, mut ours) = tokio::io::duplex(64 * 1024);
    let server = server.to_owned();
    tokio::spawn(async move {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let mut line = Line::default();
        loop {
            let (used, ended) = match reader.fill_buf().await {
                Ok([]) | Err(_) => break,
                Ok(buf) => {
                    if let Some(at) = buf.iter().position(|&b| b == b'\n') {
                        line.push(&buf[..=at]);
                        (at + 1, true)
                    } else {
                        line.push(buf);
                        (buf.len(), false)
                    }
                }
            };
            reader.consume(used);
            if ended {
                let out = line.finish(&server);
                if out.len() < TOOL_LIST_BYTES && contains(&out, b"\"taskSupport\"") {
                    task_only.note(&out);
                }
                if ours.write_all(&out).await.is_err() {
                    break;
                }
            }
        }
        let _ = ours.shutdown().await;
    });
    theirs
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One line being read: whole while it fits, else its two ends and its length.
#[derive(Default)]
struct Line {
    bytes: Vec<u8>,
    tail: Vec<u8>,
    len: usize,
}

impl Line {
    fn push(&mut self, chunk: &[u8]) {
        self.len += chunk.len();
        if self.len <= MAX_LINE_BYTES + 1 {
            self.bytes.extend_from_slice(chunk);
            return;
        }
        if self.bytes.len() > EDGE {
            let keep = self.bytes.split_off(self.bytes.len() - EDGE);
            self.bytes.truncate(EDGE);
            self.tail = keep;
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 4 * EDGE {
            self.tail.drain(..self.tail.len() - EDGE);
        }
    }

    /// The line to pass on, and a fresh start.
    fn finish(&mut self, server: &str) -> Vec<u8> {
        let line = std::mem::take(self);
        if line.len <= MAX_LINE_BYTES + 1 {
            return line.bytes;
        }
        let id = request_id(&line.bytes, &line.tail);
        tracing::warn!(server = %server, bytes = line.len, "MCP message over the stdio line limit");
        let Some(id) = id else {
            return Vec::new();
        };
        let message = format!(
            "the answer was {:.1} MiB, over the {} MiB one message over stdio may take, and \
             was dropped; ask for less at once (a narrower query, a page or a range)",
            line.len as f64 / (1024.0 * 1024.0),
            (MAX_LINE_BYTES + 1) / (1024 * 1024)
        );
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": TOO_LARGE_CODE, "message": message},
        });
        let mut out = answer.to_string().into_bytes();
        out.push(b'\n');
        out
    }
}

/// The top-level `"id"` of a JSON-RPC message from its first and last bytes: SDKs write it
/// either before the result (`{"jsonrpc":"2.0","id":7,"result":…}`) or after it
/// (`{"result":…,"jsonrpc":"2.0","id":7}`).
fn request_id(head: &[u8], tail: &[u8]) -> Option<serde_json::Value> {
    let head = String::from_utf8_lossy(head);
    let before_result = head
        .find("\"result\"")
        .map_or(head.as_ref(), |at| &head[..at]);
    if let Some(id) = before_result
        .find("\"id\"")
        .and_then(|at| id_value(&before_result[at..]))
    {
        return Some(id);
    }
    let tail = String::from_utf8_lossy(tail);
    let at = tail.rfind("\"id\"")?;
    id_value(&tail[at..])
}

/// The value after `"id":` when it is a number or a plain string.
fn id_value(text: &str) -> Option<serde_json::Value> {
    let rest = text
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    serde_json::from_str(rest[..end].trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_before_or_after_the_result() {
        let head = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"id":99"#;
        assert_eq!(request_id(head, b"xx\"}]}}\n"), Some(serde_json::json!(7)));
        let head = br#"{"result":{"content":[{"type":"text","text":"xxxx"#;
        let tail = br#"xxx"}]},"jsonrpc":"2.0","id":"req-3"}"#;
        assert_eq!(request_id(head, tail), Some(serde_json::json!("req-3")));
        assert_eq!(request_id(b"{\"result\":", b"xxxx"), None);
    }
}
