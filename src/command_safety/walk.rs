//! The walk over a tokenised command text: substitutions are evaluated recursively, function
//! definitions are checked for fork bombs, and the token stream is cut at operators into simple
//! commands, each evaluated with the knowledge of whether it reads from a pipe. `Cx` carries the
//! shared state through the rules.

use super::Level;
use super::catalog;
use super::cx::Cx;
use super::finding::Acc;
use super::obfuscation;
use super::simple;
use super::tokenize::{self, Op, Redir, Tok, Word};

/// How deep substitutions and `sh -c` strings are followed.
const MAX_DEPTH: u8 = 8;
/// How deep commands run by commands (`env nice xargs …`) are followed.
const MAX_NESTING: u8 = 16;

impl Cx<'_> {
    /// Evaluates `words` as a command run by the current one (`env X`, `xargs X`, `find -exec X`).
    pub(crate) fn command(&mut self, words: &[&Word<'_>], after_pipe: bool) {
        if self.nesting >= MAX_NESTING {
            return self.acc.note(&catalog::TOO_DEEP, "");
        }
        let saved = std::mem::replace(&mut self.after_pipe, after_pipe);
        self.nesting += 1;
        simple::command(words, self);
        self.nesting -= 1;
        self.after_pipe = saved;
    }

    /// Whether `words`, run as a command from here, would be disabled (judged apart: nothing
    /// is noted). Inside such a judgement an unknown program asks this only once (see
    /// `rules::unknown`), so the questions form a chain, not a tree: asked at several places
    /// at every level they branched without end (found by the `one_reading` fuzz target: a
    /// 425-byte command of `env` and unknown programs took over a minute).
    pub(crate) fn would_be_disabled(&self, words: &[&Word<'_>]) -> bool {
        if self.nesting >= MAX_NESTING {
            return false;
        }
        let mut acc = Acc::new(self.acc.context);
        acc.probing = true;
        let mut apart = Cx {
            acc: &mut acc,
            depth: self.depth,
            nesting: self.nesting + 1,
            after_pipe: self.after_pipe,
            stdin: self.stdin,
            cd_depth: self.cd_depth,
            in_git: self.in_git,
            detached: true,
            subshells: [0; 4],
            open_subshells: 0,
        };
        simple::command(words, &mut apart);
        acc.level() == Level::Disabled
    }

    /// Remembers the `cd` depth at `(` and restores it at `)`. The restored depth is never deeper
    /// than the one seen, so an unknown one (too much nesting) counts as the workspace root.
    fn track_subshell(&mut self, op: Op) {
        match op {
            Op::Open => {
                if let Some(slot) = self.subshells.get_mut(self.open_subshells) {
                    *slot = self.cd_depth;
                }
                self.open_subshells += 1;
            }
            Op::Close if self.open_subshells > 0 => {
                self.open_subshells -= 1;
                let saved = self
                    .subshells
                    .get(self.open_subshells)
                    .copied()
                    .unwrap_or(0);
                self.cd_depth = self.cd_depth.min(saved);
            }
            _ => {}
        }
    }

    /// Evaluates a string the command will run as shell code (`sh -c STRING`). Its parts are
    /// recorded (one level deeper) and its findings belong to the current part.
    pub(crate) fn text(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            return self.acc.note(&catalog::TOO_DEEP, "");
        }
        if !self.acc.records() {
            return evaluate_text(text, self.depth + 1, self.acc);
        }
        let outer = self.acc.begin_nested();
        evaluate_text(text, self.depth + 1, self.acc);
        self.acc.end_nested(outer);
    }
}

/// Evaluates one command text into `acc`. Every simple command is one part: when `acc` records
/// parts, each is recorded with its text, so a rule matcher sees exactly what was judged.
pub(crate) fn evaluate_text(text: &str, depth: u8, acc: &mut Acc) {
    let scan = match tokenize::scan(text) {
        Ok(scan) => scan,
        Err(bad) => return unreadable(text, bad, depth, acc),
    };
    let records = acc.records();
    let mut cx = Cx {
        acc,
        depth,
        nesting: 0,
        after_pipe: false,
        stdin: None,
        cd_depth: 0,
        in_git: false,
        detached: false,
        subshells: [0; 4],
        open_subshells: 0,
    };
    for sub in &scan.subs {
        cx.note(&catalog::SUBSTITUTION, sub.trim());
        cx.text(sub);
    }
    if records && !scan.subs.is_empty() {
        cx.acc.substituted |= depth == 0;
        cx.acc.end_part(None, depth);
    }
    let toks = &scan.toks;
    let mut part = Segment::new(text, &scan.spans, depth);
    let mut words: Vec<&Word<'_>> = Vec::with_capacity(8);
    let mut redirs: Vec<&Redir<'_>> = Vec::new();
    let mut i = 0;
    // Every command is read to the end, recording parts or not: stopping at the first disabled
    // one let a later, more specific disabled rule (a fork bomb after a disabled substitution)
    // decide one view and not the other (found by the `one_reading` fuzz target).
    while i < toks.len() {
        match &toks[i] {
            Tok::Word(word) => {
                part.extend(i);
                if words.is_empty() && redirs.is_empty() {
                    let header = function_definition(toks, i, &mut cx);
                    if header > 0 {
                        part.extend(i + header - 1);
                        i += header;
                        continue;
                    }
                }
                words.push(word);
            }
            Tok::Redir(redir) => {
                part.extend(i);
                redirs.push(redir);
            }
            Tok::Op(op) => {
                cx.detached = cx.after_pipe || matches!(op, Op::Pipe | Op::Background);
                part.note_escapes(&redirs, cx.acc);
                flush(&mut words, &mut redirs, scan.secret_var, &mut cx);
                part.end(cx.acc);
                cx.after_pipe = *op == Op::Pipe;
                cx.track_subshell(*op);
            }
        }
        i += 1;
    }
    cx.detached = cx.after_pipe;
    part.note_escapes(&redirs, cx.acc);
    flush(&mut words, &mut redirs, scan.secret_var, &mut cx);
    part.end(cx.acc);
}

/// A text that cannot be tokenised: its complete lines are judged as they run (bash runs them
/// before it stops at the broken one), and the rest is one part that needs permission. A
/// `rm -rf ~` line before an unterminated quote is disabled, not a mere parse error that a
/// rule or auto mode could allow.
fn unreadable(text: &str, bad: tokenize::Unscanned, depth: u8, acc: &mut Acc) {
    let (lines, rest) = text.split_at(bad.complete);
    if !lines.trim().is_empty() {
        evaluate_text(lines, depth, acc);
    }
    if obfuscation::has_hex_escapes(rest) {
        acc.note(&catalog::OBF_ESCAPES, "");
    }
    acc.note(bad.rule, "");
    acc.unreadable |= depth == 0;
    // Only what the scanner takes for blanks is trimmed: `str::trim` also took a form feed,
    // and `\f#…` (a word) became `#…` (a comment) when the part was read alone.
    acc.end_part(Some(trim_blanks(rest)), depth);
}

/// `text` without the blanks around it, but a blank a backslash escapes stays: `x \<newline>`
/// read alone without its newline would end in a lone backslash, another reading.
fn trim_blanks(text: &str) -> &str {
    const BLANKS: [char; 4] = [' ', '\t', '\n', '\r'];
    let mut rest = text.trim_start_matches(BLANKS);
    while let Some(last) = rest.chars().last().filter(|c| BLANKS.contains(c)) {
        let before = &rest[..rest.len() - last.len_utf8()];
        let backslashes = before.len() - before.trim_end_matches('\\').len();
        if backslashes % 2 == 1 {
            break;
        }
        rest = before;
    }
    rest
}

/// The tokens of the simple command being read, for recording it as a part.
struct Segment<'t> {
    text: &'t str,
    spans: &'t [(usize, usize)],
    depth: u8,
    first: Option<usize>,
    last: usize,
}

impl<'t> Segment<'t> {
    fn new(text: &'t str, spans: &'t [(usize, usize)], depth: u8) -> Self {
        Self {
            text,
            spans,
            depth,
            first: None,
            last: 0,
        }
    }

    fn extend(&mut self, tok: usize) {
        self.first.get_or_insert(tok);
        self.last = tok;
    }

    /// The segment's own text, from its first token to its last (here-document bodies lie
    /// after the line and are not in it).
    fn source(&self) -> &'t str {
        let Some(first) = self.first else { return "" };
        let start = self.spans.get(first).map_or(0, |s| s.0);
        let end = self.spans.get(self.last).map_or(0, |s| s.1);
        self.text.get(start..end).unwrap_or("")
    }

    /// Hex and Unicode escapes (`\x72\x6d`) in the segment's text or its here-documents are a
    /// finding of this command, so the part that holds them carries it: noted on the whole
    /// text, the finding went to whichever part was open (the first one, or none when the text
    /// began with `(` or `;`), and the parts disagreed with the whole.
    fn note_escapes(&self, redirs: &[&Redir<'_>], acc: &mut Acc) {
        let bodies = redirs.iter().map(|r| r.body);
        if std::iter::once(self.source())
            .chain(bodies)
            .any(obfuscation::has_hex_escapes)
        {
            acc.note(&catalog::OBF_ESCAPES, "");
        }
    }

    /// Ends the segment: a part is recorded when it held any token, and findings made outside
    /// any segment (a lone operator) still count for the whole.
    fn end(&mut self, acc: &mut Acc) {
        if !acc.records() {
            self.first = None;
            return;
        }
        let text = self.first.is_some().then(|| self.source());
        self.first = None;
        acc.end_part(text, self.depth);
    }
}

fn flush<'w, 'a: 'w>(
    words: &mut Vec<&'w Word<'a>>,
    redirs: &mut Vec<&'w Redir<'a>>,
    secret_var: &str,
    cx: &mut Cx<'w>,
) {
    if !words.is_empty() || !redirs.is_empty() {
        simple::evaluate(words, redirs, secret_var, cx);
        words.clear();
        redirs.clear();
    }
}

fn word_at<'t>(toks: &'t [Tok<'_>], i: usize) -> Option<&'t str> {
    match toks.get(i) {
        Some(Tok::Word(w)) => Some(&w.text),
        _ => None,
    }
}

fn op_at(toks: &[Tok<'_>], i: usize) -> Option<Op> {
    match toks.get(i) {
        Some(Tok::Op(op)) => Some(*op),
        _ => None,
    }
}

/// At a command position: `name() …` or `function name …`. Notes the definition (and a fork bomb)
/// and returns how many tokens its header takes, or 0 when this is no definition.
fn function_definition(toks: &[Tok<'_>], i: usize, cx: &mut Cx<'_>) -> usize {
    let parens =
        |at: usize| op_at(toks, at) == Some(Op::Open) && op_at(toks, at + 1) == Some(Op::Close);
    let (name, header) = match word_at(toks, i) {
        Some("function") => match word_at(toks, i + 1) {
            Some(name) if parens(i + 2) => (name, 4),
            Some(name) => (name, 2),
            None => return 0,
        },
        Some(name) if parens(i + 1) => (name, 3),
        _ => return 0,
    };
    cx.note(&catalog::FUNCTION, name);
    if is_fork_bomb(name, &toks[i + header..]) {
        cx.note(&catalog::FORK_BOMB, name);
    }
    header
}

/// A body (`{ … }` or `( … )`) that calls the function twice, or once in the background.
fn is_fork_bomb(name: &str, body: &[Tok<'_>]) -> bool {
    let (open, close) = match body.first() {
        Some(Tok::Op(Op::Open)) => (None, Some(Op::Close)),
        Some(Tok::Word(w)) if w.text == "{" => (Some("{"), None),
        _ => return false,
    };
    let (mut depth, mut calls, mut background) = (0usize, 0usize, false);
    let mut at_command = true;
    for (k, tok) in body.iter().enumerate() {
        match tok {
            Tok::Word(w) if open == Some(&*w.text) && at_command => depth += 1,
            Tok::Word(w) if close.is_none() && w.text == "}" && at_command => depth -= 1,
            Tok::Op(Op::Open) if close.is_some() => depth += 1,
            Tok::Op(op) if Some(*op) == close => depth -= 1,
            Tok::Word(w)
                if at_command && w.text == name && op_at(body, k + 1) != Some(Op::Open) =>
            {
                calls += 1;
            }
            Tok::Op(Op::Background) => background = true,
            _ => {}
        }
        at_command = matches!(tok, Tok::Op(_)) || matches!(tok, Tok::Word(w) if w.text == "{");
        if depth == 0 {
            break;
        }
    }
    calls >= 2 || (calls == 1 && background)
}
