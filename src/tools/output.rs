//! Bounded output: keep the tail of a stream within a character and line budget without
//! ever holding the whole stream, and say exactly what was cut.
//!
//! A command that prints a gigabyte costs cn-run a few hundred kilobytes of memory; the
//! model sees the last lines and a note of how many lines and characters came before.

use std::collections::VecDeque;

/// The tail of a byte stream, bounded by characters and lines.
#[derive(Debug)]
pub struct TailBuffer {
    max_chars: usize,
    max_lines: usize,
    lines: VecDeque<String>,
    chars: usize,
    partial: String,
    pending: Vec<u8>,
    dropped_lines: u64,
    dropped_chars: u64,
}

/// What a [`TailBuffer`] cut from the front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cut {
    pub lines: u64,
    pub chars: u64,
}

impl TailBuffer {
    pub fn new(max_chars: usize, max_lines: usize) -> Self {
        TailBuffer {
            max_chars: max_chars.max(1),
            max_lines: max_lines.max(1),
            lines: VecDeque::new(),
            chars: 0,
            partial: String::new(),
            pending: Vec::new(),
            dropped_lines: 0,
            dropped_chars: 0,
        }
    }

    /// Append raw bytes; invalid UTF-8 becomes U+FFFD, split sequences are joined.
    pub fn push(&mut self, bytes: &[u8]) {
        let owned;
        let data: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            self.pending.extend_from_slice(bytes);
            owned = std::mem::take(&mut self.pending);
            &owned
        };
        let valid_up_to = match std::str::from_utf8(data) {
            Ok(_) => data.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => data.len(),
        };
        let (text, rest) = data.split_at(valid_up_to);
        self.push_str(&String::from_utf8_lossy(text));
        self.pending = rest.to_vec();
    }

    fn push_str(&mut self, text: &str) {
        let mut rest = text;
        while let Some(pos) = rest.find('\n') {
            self.partial.push_str(&rest[..=pos]);
            let line = std::mem::take(&mut self.partial);
            self.chars += line.chars().count();
            self.lines.push_back(line);
            rest = &rest[pos + 1..];
            self.enforce();
        }
        self.partial.push_str(rest);
        self.trim_partial();
    }

    /// A single line longer than the budget keeps only its last `max_chars` characters.
    fn trim_partial(&mut self) {
        if self.partial.len() <= self.max_chars.saturating_mul(4) {
            return;
        }
        let count = self.partial.chars().count();
        if count > self.max_chars {
            let drop = count - self.max_chars;
            let cut_at = self
                .partial
                .char_indices()
                .nth(drop)
                .map_or(self.partial.len(), |(i, _)| i);
            self.partial.drain(..cut_at);
            self.dropped_chars += drop as u64;
        }
    }

    fn enforce(&mut self) {
        while self.lines.len() > self.max_lines
            || (self.chars > self.max_chars && self.lines.len() > 1)
        {
            if let Some(line) = self.lines.pop_front() {
                let n = line.chars().count();
                self.chars -= n;
                self.dropped_lines += 1;
                self.dropped_chars += n as u64;
            }
        }
    }

    /// The kept text and what was cut before it.
    pub fn finish(mut self) -> (String, Cut) {
        if !self.pending.is_empty() {
            let rest = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.push_str(&rest);
        }
        let mut text: String = self.lines.into_iter().collect();
        text.push_str(&self.partial);
        let (text, cut) = truncate_tail(&text, self.max_chars, self.max_lines);
        (
            text,
            Cut {
                lines: self.dropped_lines + cut.lines,
                chars: self.dropped_chars + cut.chars,
            },
        )
    }
}

/// The tail of `text` within `max_chars` and `max_lines`, and what was cut.
pub fn truncate_tail(text: &str, max_chars: usize, max_lines: usize) -> (String, Cut) {
    let mut cut = Cut::default();
    let mut start = 0;
    let line_count = text.lines().count();
    if line_count > max_lines {
        let skip = line_count - max_lines;
        let mut seen = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == skip {
                    start = i + 1;
                    break;
                }
            }
        }
        cut.lines += skip as u64;
        cut.chars += text[..start].chars().count() as u64;
    }
    let kept = &text[start..];
    let count = kept.chars().count();
    if count <= max_chars {
        return (kept.to_owned(), cut);
    }
    let drop = count - max_chars;
    let mut at = kept.char_indices().nth(drop).map_or(kept.len(), |(i, _)| i);
    // Prefer to start on a line boundary when one is close.
    if let Some(nl) = kept[at..].find('\n')
        && nl < 1_000
        && at + nl + 1 < kept.len()
    {
        at += nl + 1;
    }
    cut.lines += kept[..at].matches('\n').count() as u64;
    cut.chars += kept[..at].chars().count() as u64;
    (kept[at..].to_owned(), cut)
}

/// The note put before a cut output, or `""` when nothing was cut.
pub(crate) fn cut_note(cut: Cut) -> String {
    match (cut.lines, cut.chars) {
        (0, 0) => String::new(),
        (lines, chars) => {
            format!("[output truncated: {lines} earlier lines ({chars} characters) not shown]\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_last_lines_and_counts_the_rest() {
        let mut t = TailBuffer::new(1_000_000, 3);
        for i in 0..10 {
            t.push(format!("line {i}\n").as_bytes());
        }
        let (text, cut) = t.finish();
        assert_eq!(text, "line 7\nline 8\nline 9\n");
        assert_eq!(cut.lines, 7);
        assert_eq!(cut.chars, 7 * 7);
    }

    #[test]
    fn bounds_one_huge_line_by_characters() {
        let mut t = TailBuffer::new(10, 100);
        for _ in 0..1000 {
            t.push(b"abcdefghij");
        }
        t.push(b"END");
        let (text, cut) = t.finish();
        assert_eq!(text.chars().count(), 10);
        assert!(text.ends_with("END"));
        assert_eq!(cut.chars, 10_003 - 10);
    }

    #[test]
    fn joins_utf8_split_across_chunks() {
        let mut t = TailBuffer::new(100, 100);
        let s = "héllo wörld".as_bytes();
        for b in s {
            t.push(&[*b]);
        }
        assert_eq!(t.finish().0, "héllo wörld");
    }

    #[test]
    fn memory_stays_bounded() {
        let mut t = TailBuffer::new(50_000, 1_000);
        let chunk = "0123456789\n".repeat(10_000);
        for _ in 0..100 {
            t.push(chunk.as_bytes());
        }
        assert!(t.lines.len() <= 1_000);
        let (text, cut) = t.finish();
        assert_eq!(text.lines().count(), 1_000);
        assert_eq!(cut.lines, 1_000_000 - 1_000);
    }

    #[test]
    fn truncate_tail_snaps_to_a_line() {
        let text = "aaaa\nbbbb\ncccc\n";
        let (kept, cut) = truncate_tail(text, 8, 100);
        assert_eq!(kept, "cccc\n");
        assert_eq!(cut.lines, 2);
    }
}
