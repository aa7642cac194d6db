//! Bracket matching for the scanner: finds the end of `$(…)`, `${…}`, `<(…)`, double-quoted text
//! and backtick substitutions, skipping quoted text and following nested substitutions up to a
//! fixed depth (deeper input is refused rather than followed).

use super::catalog;
use super::tokenize::{Scanned, Scanner, memchr};

/// Deepest nesting of quotes and brackets the matcher follows.
const MAX_NESTING: usize = 64;

impl Scanner<'_> {
    /// Index of the bracket closing the one at `open` (`(` or `{`), skipping quoted text.
    pub(super) fn match_close(&self, open: usize, nesting: usize) -> Scanned<usize> {
        if nesting > MAX_NESTING {
            return Err(&catalog::TOO_DEEP);
        }
        let (up, down) = if self.b[open] == b'{' {
            (b'{', b'}')
        } else {
            (b'(', b')')
        };
        let mut depth = 0usize;
        let mut j = open;
        while j < self.b.len() {
            match self.b[j] {
                c if c == up => depth += 1,
                c if c == down => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(j);
                    }
                }
                b'\\' => j += 1,
                b'\'' => {
                    j += 1 + memchr(b'\'', &self.b[j + 1..]).ok_or(&catalog::PARSE_ERROR)?;
                }
                b'"' => j = self.dq_end(j, nesting + 1)?,
                b'`' => j = self.backtick_end(j)?,
                _ => {}
            }
            j += 1;
        }
        Err(&catalog::PARSE_ERROR)
    }

    /// Index of the `"` closing the one at `open`.
    fn dq_end(&self, open: usize, nesting: usize) -> Scanned<usize> {
        let mut j = open + 1;
        while j < self.b.len() {
            match (self.b[j], self.b.get(j + 1)) {
                (b'"', _) => return Ok(j),
                (b'\\', _) => j += 1,
                (b'$', Some(b'(' | b'{')) => j = self.match_close(j + 1, nesting + 1)?,
                (b'`', _) => j = self.backtick_end(j)?,
                _ => {}
            }
            j += 1;
        }
        Err(&catalog::PARSE_ERROR)
    }

    pub(super) fn backtick_end(&self, open: usize) -> Scanned<usize> {
        let mut j = open + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'`' => return Ok(j),
                b'\\' => j += 2,
                _ => j += 1,
            }
        }
        Err(&catalog::PARSE_ERROR)
    }
}
