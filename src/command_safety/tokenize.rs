//! The shell scanner: one pass over the bytes of a command line that yields words (quotes
//! removed, with flags for what the shell would expand), operators (`;`, `&`, `&&`, `||`, `|`,
//! newlines, parentheses) and redirections (with here-document bodies), and collects the text of
//! every command substitution for recursive evaluation. It follows POSIX quoting (the rules
//! `shell-words` implements) and is hand-written so that evaluating a typical command costs well
//! under a microsecond. Anything it cannot take apart is an error, which the evaluator turns into
//! "needs permission".

use std::borrow::Cow;

use super::catalog::{self, Rule};
use super::chars::unicode_blank;

/// Scanner result: a failure names the rule that explains it.
pub(crate) type Scanned<T> = Result<T, &'static Rule>;

/// Word flags.
pub(crate) const QUOTED: u16 = 1;
/// The word has literal text besides expansions (an empty `""` counts as literal).
pub(crate) const LITERAL: u16 = 1 << 1;
pub(crate) const EXPANDS: u16 = 1 << 2;
pub(crate) const SUBST: u16 = 1 << 3;
pub(crate) const ANSI_C: u16 = 1 << 4;
pub(crate) const GLOB: u16 = 1 << 5;
pub(crate) const MULTILINE: u16 = 1 << 6;
pub(crate) const INVISIBLE: u16 = 1 << 7;
pub(crate) const SECRET_VAR: u16 = 1 << 8;

/// One word after quote removal. Expansions (`$X`, `${X}`, `$(…)`) stay in the text verbatim.
#[derive(Debug, Clone)]
pub(crate) struct Word<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) flags: u16,
    /// Length of the text before the first quote or escape (for spotting `NAME=value`).
    pub(crate) plain_len: usize,
}

impl Word<'_> {
    pub(crate) fn has(&self, flags: u16) -> bool {
        self.flags & flags != 0
    }

    /// The word's value is only known when the shell runs it.
    pub(crate) fn hidden(&self) -> bool {
        self.has(EXPANDS | SUBST)
    }

    /// The word is nothing but expansions, so it may expand to nothing at all.
    pub(crate) fn pure_expansion(&self) -> bool {
        self.hidden() && !self.has(LITERAL)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `;`, `;;` or a line break.
    Seq,
    Background,
    And,
    Or,
    Pipe,
    Open,
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirKind {
    Write,
    Read,
    /// `>&2`, `<&0`: duplicates a descriptor.
    Dup,
    HereDoc,
    HereString,
}

#[derive(Debug)]
pub(crate) struct Redir<'a> {
    pub(crate) kind: RedirKind,
    /// The file, descriptor, here-string or here-document delimiter. For an unquoted
    /// here-document the body's expansion flags are added here.
    pub(crate) target: Word<'a>,
    pub(crate) body: &'a str,
}

#[derive(Debug)]
pub(crate) enum Tok<'a> {
    Word(Word<'a>),
    Op(Op),
    Redir(Redir<'a>),
}

#[derive(Debug)]
pub(crate) struct Scan<'a> {
    pub(crate) toks: Vec<Tok<'a>>,
    /// Byte range of each token in the source (`spans[k]` belongs to `toks[k]`); a redirection's
    /// range starts at its descriptor number and ends after its target (a here-document's body
    /// lies after the line and is not in it).
    pub(crate) spans: Vec<(usize, usize)>,
    /// Inner text of every `$(…)`, `` `…` ``, `<(…)` and `>(…)`, outermost only.
    pub(crate) subs: Vec<Cow<'a, str>>,
    /// The first secret-looking variable name expanded, for the reason text.
    pub(crate) secret_var: &'a str,
}

/// Why a text could not be tokenised, and how much of it could: bash reads and runs a text
/// command by command, so the complete lines before an unterminated quote or substitution run
/// before bash stops at it (`rm -rf ~` then `echo "abc`: the first line runs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unscanned {
    pub(crate) rule: &'static Rule,
    /// Bytes of the text that end at a line break outside any quote, substitution or
    /// here-document (0 when the failure is on the first line).
    pub(crate) complete: usize,
}

/// A here-document whose body starts after the current line.
struct Pending<'a> {
    tok: usize,
    delim: Cow<'a, str>,
    strip_tabs: bool,
    expands: bool,
}

pub(super) struct Scanner<'a> {
    pub(super) src: &'a str,
    pub(super) b: &'a [u8],
    pub(super) i: usize,
    pub(super) out: Scan<'a>,
    pending: Vec<Pending<'a>>,
    /// Where the text after the last complete line starts (see [`Unscanned`]).
    complete: usize,
}

/// Tokenises one command text (which may span lines).
pub(crate) fn scan(src: &str) -> Result<Scan<'_>, Unscanned> {
    let mut s = Scanner {
        src,
        b: src.as_bytes(),
        i: 0,
        out: Scan {
            toks: Vec::with_capacity(16),
            spans: Vec::with_capacity(16),
            subs: Vec::new(),
            secret_var: "",
        },
        pending: Vec::new(),
        complete: 0,
    };
    match s.run() {
        Ok(()) => Ok(s.out),
        Err(rule) => Err(Unscanned {
            rule,
            complete: s.complete,
        }),
    }
}

impl<'a> Scanner<'a> {
    pub(super) fn peek(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.i + ahead).copied()
    }

    fn run(&mut self) -> Scanned<()> {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek(0) else { break };
            let two = self.peek(1);
            let (op, len) = match (c, two) {
                (b'\n' | b'\r', _) => {
                    self.i += 1;
                    self.push_tok(Tok::Op(Op::Seq), self.i - 1);
                    self.read_heredocs()?;
                    self.complete = self.i;
                    continue;
                }
                (b'#', _) => {
                    self.skip_comment();
                    continue;
                }
                (b';', Some(b';' | b'&')) => (Op::Seq, 2),
                (b';', _) => (Op::Seq, 1),
                (b'&', Some(b'&')) => (Op::And, 2),
                (b'&', Some(b'>')) => {
                    self.redirect_from(self.i)?;
                    continue;
                }
                (b'&', _) => (Op::Background, 1),
                (b'|', Some(b'|')) => (Op::Or, 2),
                (b'|', Some(b'&')) => (Op::Pipe, 2),
                (b'|', _) => (Op::Pipe, 1),
                (b'(', _) => (Op::Open, 1),
                (b')', _) => (Op::Close, 1),
                (b'<' | b'>', Some(b'(')) => {
                    self.push_word()?;
                    continue;
                }
                (b'<' | b'>', _) => {
                    self.redirect_from(self.i)?;
                    continue;
                }
                _ => {
                    self.push_word()?;
                    continue;
                }
            };
            self.i += len;
            self.push_tok(Tok::Op(op), self.i - len);
        }
        // A here-document still open at the end: bash warns and runs the command anyway.
        self.read_heredocs()
    }

    /// Appends a token that started at byte `start` and ends here.
    fn push_tok(&mut self, tok: Tok<'a>, start: usize) {
        self.out.toks.push(tok);
        self.out.spans.push((start, self.i));
    }

    /// Reads a word; a bare number directly before `<` or `>` is a descriptor, not a word.
    fn push_word(&mut self) -> Scanned<()> {
        let start = self.i;
        let word = self.word()?;
        let is_fd = !word.has(QUOTED) && word.text.bytes().all(|c| c.is_ascii_digit());
        if is_fd && matches!(self.peek(0), Some(b'<' | b'>')) {
            return self.redirect_from(start);
        }
        self.push_tok(Tok::Word(word), start);
        Ok(())
    }

    /// Skips spaces, tabs, Unicode spaces and line continuations.
    pub(super) fn skip_blanks(&mut self) {
        while let Some(c) = self.peek(0) {
            self.i += match (c, self.peek(1), self.peek(2)) {
                (b' ' | b'\t', _, _) => 1,
                (b'\\', Some(b'\n'), _) => 2,
                (b'\\', Some(b'\r'), Some(b'\n')) => 3,
                (0x80.., _, _) => match unicode_blank(&self.b[self.i..]) {
                    0 => return,
                    n => n,
                },
                _ => return,
            };
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == b'\n' || c == b'\r' {
                return;
            }
            self.i += 1;
        }
    }

    fn redirect_from(&mut self, start: usize) -> Scanned<()> {
        use RedirKind::*;
        let (kind, len, strip_tabs) = match (self.peek(0), self.peek(1), self.peek(2)) {
            (Some(b'&'), _, Some(b'>')) => (Write, 3, false),
            (Some(b'&'), _, _) => (Write, 2, false),
            (Some(b'<'), Some(b'<'), Some(b'<')) => (HereString, 3, false),
            (Some(b'<'), Some(b'<'), Some(b'-')) => (HereDoc, 3, true),
            (Some(b'<'), Some(b'<'), _) => (HereDoc, 2, false),
            (Some(b'<'), Some(b'&'), _) => (Dup, 2, false),
            (Some(b'<'), Some(b'>'), _) => (Write, 2, false),
            (Some(b'<'), _, _) => (Read, 1, false),
            (_, Some(b'&'), _) => (Dup, 2, false),
            (_, Some(b'>' | b'|'), _) => (Write, 2, false),
            _ => (Write, 1, false),
        };
        self.i += len;
        self.skip_blanks();
        let starts_word = match (self.peek(0), self.peek(1)) {
            (Some(b'<' | b'>'), Some(b'(')) => true,
            (None | Some(b'\n' | b'\r' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'), _) => {
                false
            }
            _ => true,
        };
        if !starts_word {
            return Err(&catalog::PARSE_ERROR);
        }
        let target = self.word()?;
        let is_fd = target
            .text
            .trim_end_matches('-')
            .bytes()
            .all(|c| c.is_ascii_digit());
        let kind = if kind == Dup && !is_fd { Write } else { kind };
        if kind == HereDoc {
            self.pending.push(Pending {
                tok: self.out.toks.len(),
                delim: target.text.clone(),
                strip_tabs,
                expands: !target.has(QUOTED),
            });
        }
        let redir = Redir {
            kind,
            target,
            body: "",
        };
        self.push_tok(Tok::Redir(redir), start);
        Ok(())
    }

    /// After a line break: reads the bodies of the here-documents opened on that line. A body
    /// without its delimiter line runs to the end of the text, as bash reads it (with a
    /// warning): refusing to tokenise it instead would let `rm -rf / <<EOF` pass as a mere
    /// parse error, which a permission rule or auto mode can allow.
    fn read_heredocs(&mut self) -> Scanned<()> {
        for doc in std::mem::take(&mut self.pending) {
            let start = self.i;
            let end = loop {
                if self.i >= self.b.len() {
                    break self.b.len();
                }
                let eol = memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |k| self.i + k);
                let line = &self.src[self.i..eol];
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                let line_start = self.i;
                self.i = (eol + 1).min(self.b.len());
                if line == doc.delim {
                    break line_start;
                }
            };
            let flags = if doc.expands {
                self.expansion_flags(start, end)?
            } else {
                0
            };
            if let Some(Tok::Redir(redir)) = self.out.toks.get_mut(doc.tok) {
                redir.body = &self.src[start..end];
                redir.target.flags |= flags;
            }
        }
        Ok(())
    }
}

/// Position of the first `needle` in `hay`.
pub(super) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == needle)
}

#[cfg(test)]
#[path = "tokenize_tests.rs"]
mod tests;
