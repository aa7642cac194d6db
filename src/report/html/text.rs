//! How much of a text the page shows, and how: what keeps report.html small on big runs.
//!
//! A text up to [`WHOLE`] bytes is shown whole. A longer one shows its first [`HEAD`] and
//! last [`TAIL`] bytes (cut at line ends where one is near) with a line between them that
//! says how much is not shown and where the whole text is — never cut silently. The page
//! spends at most [`TOTAL`] bytes on texts; once that is spent, each further text shows
//! only its first and last lines ([`SPENT_HEAD`], [`SPENT_TAIL`]) and says so. So the file
//! stays under about `TOTAL` plus the markup of the run's calls and turns, whatever the
//! outputs weigh.
//!
//! What is shown is cleaned for reading: in texts, terminal escape sequences and control
//! characters go (`report::clean`); on the whole page, the characters that reorder or hide
//! text on screen (bidirectional overrides and isolates, zero-width characters) and any
//! control character left are shown as their code points ([`visible`]), so what a reader
//! sees is the order of the bytes — in a tool's name as in its output.

use crate::report::clean::clean;

/// Texts up to this many bytes are shown whole.
pub const WHOLE: usize = 16 * 1024;
/// The parts of a longer text that are shown.
pub const HEAD: usize = 10 * 1024;
pub const TAIL: usize = 4 * 1024;
/// The bytes of text the whole page shows at most.
pub const TOTAL: usize = 8 << 20;
/// What a text shows once the page's budget is spent.
pub const SPENT_HEAD: usize = 1024;
pub const SPENT_TAIL: usize = 512;
/// How far back from a cut a line end is looked for.
const LINE_SLACK: usize = 512;

/// The page's budget for texts.
#[derive(Debug, Clone)]
pub struct Budget {
    left: usize,
    /// Texts shown in part because the budget was spent.
    pub starved: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(TOTAL)
    }
}

/// A text as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The start (or all) of the text, cleaned.
    pub head: String,
    /// The end, when the middle is not shown.
    pub tail: Option<String>,
    /// Bytes and lines of the whole text, and of the part not shown.
    pub bytes: usize,
    pub lines: usize,
    pub hidden_bytes: usize,
    pub hidden_lines: usize,
    /// The page's budget was spent: less than usual is shown.
    pub starved: bool,
}

impl Budget {
    pub fn new(total: usize) -> Budget {
        Budget {
            left: total,
            starved: 0,
        }
    }

    /// The part of `text` to show, taken from the budget.
    pub fn take(&mut self, text: &str) -> Shown {
        let lines = line_count(text);
        let (head_len, tail_len, starved) = if text.len() <= WHOLE.min(self.left) {
            (text.len(), 0, false)
        } else if HEAD + TAIL <= self.left {
            (HEAD, TAIL, false)
        } else {
            (SPENT_HEAD, SPENT_TAIL, true)
        };
        if head_len + tail_len >= text.len() {
            self.left = self.left.saturating_sub(text.len());
            return Shown {
                head: readable(text),
                tail: None,
                bytes: text.len(),
                lines,
                hidden_bytes: 0,
                hidden_lines: 0,
                starved: false,
            };
        }
        let head = &text[..head_end(text, head_len)];
        let tail = &text[tail_start(text, tail_len).max(head.len())..];
        let hidden = &text[head.len()..text.len() - tail.len()];
        self.left = self.left.saturating_sub(head.len() + tail.len());
        self.starved += usize::from(starved);
        Shown {
            head: readable(head),
            tail: Some(readable(tail)),
            bytes: text.len(),
            lines,
            hidden_bytes: hidden.len(),
            hidden_lines: memchr::memchr_iter(b'\n', hidden.as_bytes()).count(),
            starved,
        }
    }
}

/// Lines in `text` (a last line without a newline counts).
pub fn line_count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// Where the head ends: after the last newline within [`LINE_SLACK`] before `at`, else at
/// the character boundary at or before `at`.
fn head_end(text: &str, at: usize) -> usize {
    let at = floor_boundary(text, at.min(text.len()));
    let from = at.saturating_sub(LINE_SLACK);
    match memchr::memrchr(b'\n', &text.as_bytes()[from..at]) {
        Some(i) => from + i + 1,
        None => at,
    }
}

/// Where the tail starts: after the first newline within [`LINE_SLACK`] after the cut,
/// else at the character boundary at or after it.
fn tail_start(text: &str, len: usize) -> usize {
    let at = ceil_boundary(text, text.len().saturating_sub(len));
    let to = (at + LINE_SLACK).min(text.len());
    match memchr::memchr(b'\n', &text.as_bytes()[at..to]) {
        Some(i) if at + i + 1 < text.len() => at + i + 1,
        _ => at,
    }
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `text` cleaned of terminal escapes and control characters.
pub fn readable(text: &str) -> String {
    clean(text)
}

/// `page` with every character that [`hides`] written as its code point (`[U+202E]`).
/// The page's own markup has none, so this touches only what the run wrote.
pub fn visible(page: String) -> String {
    if !page.chars().any(hides) {
        return page;
    }
    let mut out = String::with_capacity(page.len() + 64);
    for c in page.chars() {
        if hides(c) {
            out.push_str(&format!("[U+{:04X}]", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Bidirectional embeddings, overrides, isolates and marks, invisible separators, and
/// control characters other than tab and line ends: what could make shown text read other
/// than it is.
fn hides(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
        | '\u{061C}' | '\u{FEFF}' | '\u{7F}'..='\u{9F}')
        || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
}

/// A size in bytes as people read it.
pub fn size(bytes: usize) -> String {
    crate::conversation::human_size(bytes)
}

/// A count with thousands separators.
pub fn count(n: impl Into<u64>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
