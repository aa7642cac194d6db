//! Word reading for the scanner: quote removal (single, double, backslash, `$'…'` with its escapes
//! decoded) and expansions (`$NAME`, `${…}`, `$(…)`, `` `…` ``, `<(…)`). A word borrows the input
//! until quoting forces a rewrite, so plain words cost no allocation.

use std::borrow::Cow;

use super::catalog;
use super::chars::{decode_escape, invisible, unescape_backticks, unicode_blank, utf8_len};
use super::secrets;
use super::tokenize::{
    ANSI_C, EXPANDS, GLOB, INVISIBLE, LITERAL, MULTILINE, QUOTED, SECRET_VAR, SUBST, Scanned,
    Scanner, Word, memchr,
};

/// A word being read: `src[start..]` is borrowed until the first rewrite, after which the text
/// lives in `owned` plus the pending run `src[seg..i]`.
pub(super) struct Buf {
    start: usize,
    seg: usize,
    owned: Option<String>,
    pub(super) flags: u16,
    plain_len: usize,
}

impl Buf {
    pub(super) fn new(start: usize) -> Self {
        Self {
            start,
            seg: start,
            owned: None,
            flags: 0,
            plain_len: usize::MAX,
        }
    }

    fn text(&mut self, src: &str, i: usize) -> &mut String {
        let owned = self
            .owned
            .get_or_insert_with(|| String::with_capacity(i - self.start + 16));
        owned.push_str(&src[self.seg..i]);
        self.seg = i;
        if self.plain_len == usize::MAX {
            self.plain_len = owned.len();
        }
        owned
    }
}

impl<'a> Scanner<'a> {
    /// Drops `n` input bytes from the word (a quote or a backslash).
    fn drop_bytes(&mut self, w: &mut Buf, n: usize) {
        w.text(self.src, self.i);
        self.i += n;
        w.seg = self.i;
    }

    pub(super) fn word(&mut self) -> Scanned<Word<'a>> {
        let mut w = Buf::new(self.i);
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'(' | b')' => break,
                b'<' | b'>' if self.peek(1) == Some(b'(') => self.substitution(&mut w)?,
                b'<' | b'>' => break,
                b'\\' => self.escape(&mut w),
                b'\'' => self.single_quoted(&mut w)?,
                b'"' => self.double_quoted(&mut w)?,
                b'$' => self.dollar(&mut w, false)?,
                b'`' => self.backtick(&mut w)?,
                b'*' | b'?' | b'[' => {
                    w.flags |= GLOB | LITERAL;
                    self.i += 1;
                }
                0x80.. => {
                    let rest = &self.b[self.i..];
                    if unicode_blank(rest) > 0 {
                        break;
                    }
                    match invisible(rest) {
                        0 => {
                            w.flags |= LITERAL;
                            self.i += utf8_len(c);
                        }
                        n => {
                            w.flags |= INVISIBLE;
                            self.drop_bytes(&mut w, n);
                        }
                    }
                }
                _ => {
                    w.flags |= LITERAL;
                    self.i += 1;
                }
            }
        }
        Ok(self.finish(w))
    }

    fn finish(&self, mut w: Buf) -> Word<'a> {
        let text = match w.owned.take() {
            None => Cow::Borrowed(&self.src[w.start..self.i]),
            Some(mut owned) => {
                owned.push_str(&self.src[w.seg..self.i]);
                Cow::Owned(owned)
            }
        };
        Word {
            plain_len: w.plain_len.min(text.len()),
            text,
            flags: w.flags,
        }
    }

    fn escape(&mut self, w: &mut Buf) {
        match (self.peek(1), self.peek(2)) {
            (None, _) => {
                w.flags |= LITERAL;
                self.i += 1;
            }
            (Some(b'\n'), _) => self.drop_bytes(w, 2),
            (Some(b'\r'), Some(b'\n')) => self.drop_bytes(w, 3),
            (Some(c), _) => {
                w.flags |= LITERAL | QUOTED;
                self.drop_bytes(w, 1);
                self.i += utf8_len(c);
            }
        }
    }

    fn single_quoted(&mut self, w: &mut Buf) -> Scanned<()> {
        w.flags |= QUOTED | LITERAL;
        self.drop_bytes(w, 1);
        let len = memchr(b'\'', &self.b[self.i..]).ok_or(&catalog::PARSE_ERROR)?;
        if self.b[self.i..self.i + len]
            .iter()
            .any(|&c| c == b'\n' || c == b'\r')
        {
            w.flags |= MULTILINE;
        }
        self.i += len;
        self.drop_bytes(w, 1);
        Ok(())
    }

    fn double_quoted(&mut self, w: &mut Buf) -> Scanned<()> {
        w.flags |= QUOTED;
        self.drop_bytes(w, 1);
        let open = self.i;
        loop {
            match (self.peek(0), self.peek(1)) {
                (None, _) => return Err(&catalog::PARSE_ERROR),
                (Some(b'"'), _) => {
                    if self.i == open {
                        w.flags |= LITERAL;
                    }
                    self.drop_bytes(w, 1);
                    return Ok(());
                }
                (Some(b'\\'), Some(b'$' | b'`' | b'"' | b'\\')) => {
                    w.flags |= LITERAL;
                    self.drop_bytes(w, 1);
                    self.i += 1;
                }
                (Some(b'\\'), Some(b'\n')) => self.drop_bytes(w, 2),
                (Some(b'$'), _) => self.dollar(w, true)?,
                (Some(b'`'), _) => self.backtick(w)?,
                (Some(c), _) => {
                    if c == b'\n' || c == b'\r' {
                        w.flags |= MULTILINE;
                    }
                    w.flags |= LITERAL;
                    self.i += 1;
                }
            }
        }
    }

    /// `$…` in a word or inside double quotes (`in_dq`) or an unquoted here-document.
    pub(super) fn dollar(&mut self, w: &mut Buf, in_dq: bool) -> Scanned<()> {
        match self.peek(1) {
            Some(b'\'') if !in_dq => return self.ansi_c(w),
            Some(b'"') if !in_dq => {
                self.drop_bytes(w, 1);
                return Ok(());
            }
            Some(b'(') => self.substitution(w)?,
            Some(b'{') => {
                let close = self.match_close(self.i + 1, 0)?;
                let inner = &self.src[self.i + 2..close];
                self.variable(w, inner.trim_start_matches(['!', '#']));
                if inner.contains("$(") || inner.contains('`') {
                    self.out.subs.push(Cow::Borrowed(inner));
                    w.flags |= SUBST;
                }
                self.i = close + 1;
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i + 1;
                let len = self.b[start..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
                    .unwrap_or(self.b.len() - start);
                self.variable(w, &self.src[start..start + len]);
                self.i = start + len;
            }
            Some(b'0'..=b'9' | b'@' | b'*') => {
                w.flags |= EXPANDS;
                self.i += 2;
            }
            // Exit status, argument count, process ids and shell flags: numbers and letters the
            // command cannot choose, so they count as literal text.
            Some(b'#' | b'?' | b'$' | b'!' | b'-') => {
                w.flags |= LITERAL;
                self.i += 2;
            }
            _ => {
                w.flags |= LITERAL;
                self.i += 1;
            }
        }
        Ok(())
    }

    /// Records the expansion of the variable named at the start of `text`.
    fn variable(&mut self, w: &mut Buf, text: &'a str) {
        w.flags |= EXPANDS;
        let len = text
            .bytes()
            .position(|c| !(c.is_ascii_alphanumeric() || c == b'_'))
            .unwrap_or(text.len());
        let name = &text[..len];
        if secrets::is_secret_var(name) {
            w.flags |= SECRET_VAR;
            if self.out.secret_var.is_empty() {
                self.out.secret_var = name;
            }
        }
    }

    fn backtick(&mut self, w: &mut Buf) -> Scanned<()> {
        let close = self.backtick_end(self.i)?;
        let inner = &self.src[self.i + 1..close];
        let inner = if inner.contains('\\') {
            Cow::Owned(unescape_backticks(inner))
        } else {
            Cow::Borrowed(inner)
        };
        self.out.subs.push(inner);
        w.flags |= SUBST;
        self.i = close + 1;
        Ok(())
    }

    /// `$(…)`, `<(…)` or `>(…)` at `self.i`: the command inside is a substitution.
    fn substitution(&mut self, w: &mut Buf) -> Scanned<()> {
        let close = self.match_close(self.i + 1, 0)?;
        self.out
            .subs
            .push(Cow::Borrowed(&self.src[self.i + 2..close]));
        w.flags |= SUBST;
        self.i = close + 1;
        Ok(())
    }

    /// `$'…'`: the escapes are decoded into the word's text.
    fn ansi_c(&mut self, w: &mut Buf) -> Scanned<()> {
        w.flags |= ANSI_C | QUOTED | LITERAL;
        self.drop_bytes(w, 2);
        loop {
            match self.peek(0) {
                None => return Err(&catalog::PARSE_ERROR),
                Some(b'\'') => {
                    self.drop_bytes(w, 1);
                    return Ok(());
                }
                Some(b'\\') => {
                    let text = w.text(self.src, self.i);
                    let used = decode_escape(&self.b[self.i + 1..], text);
                    self.i += 1 + used;
                    w.seg = self.i;
                }
                Some(c) => self.i += utf8_len(c),
            }
        }
    }

    /// Flags of the expansions in an unquoted here-document body `src[start..end]`; substituted
    /// commands are collected like any other.
    pub(super) fn expansion_flags(&mut self, start: usize, end: usize) -> Scanned<u16> {
        let resume = self.i;
        let mut w = Buf::new(start);
        self.i = start;
        while self.i < end {
            match self.peek(0) {
                Some(b'\\') => self.i += 2,
                Some(b'$') => self.dollar(&mut w, true)?,
                Some(b'`') => self.backtick(&mut w)?,
                _ => self.i += 1,
            }
        }
        self.i = resume;
        Ok(w.flags & (EXPANDS | SUBST | SECRET_VAR))
    }
}
