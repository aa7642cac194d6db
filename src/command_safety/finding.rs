//! Combining findings: every part of a command reports the rules it triggers, and the strictest
//! finding (by level, then by how specific its rule is) decides the verdict. The subject of the
//! deciding finding (a program, path or variable) is kept in a small inline buffer so that
//! evaluating a command allocates nothing until the final reason is written.

use super::catalog::{self, Rule};
use super::{Context, Level, Verdict};

/// Longest subject quoted in a reason, in bytes; longer ones are cut at a character boundary.
const SUBJECT_MAX: usize = 48;

/// The strictest finding seen so far.
#[derive(Clone, Copy)]
struct Finding {
    best: Option<&'static Rule>,
    subject: [u8; SUBJECT_MAX],
    subject_len: usize,
    cut: bool,
}

impl Finding {
    const NONE: Finding = Finding {
        best: None,
        subject: [0; SUBJECT_MAX],
        subject_len: 0,
        cut: false,
    };

    /// Takes the finding if it is stricter or more specific; says whether it did.
    fn note_parts(&mut self, rule: &'static Rule, parts: &[&str]) -> bool {
        if let Some(best) = self.best
            && (rule.level, rule.weight) <= (best.level, best.weight)
        {
            return false;
        }
        self.best = Some(rule);
        self.subject_len = 0;
        self.cut = false;
        for part in parts.iter().filter(|p| !p.is_empty()) {
            if self.subject_len > 0 {
                self.push(" ");
            }
            self.push(part);
        }
        true
    }

    /// Takes in `other`'s finding if it is stricter.
    fn merge(&mut self, other: &Finding) {
        if let Some(rule) = other.best
            && self.note_parts(rule, &[other.subject()])
        {
            self.cut |= other.cut;
        }
    }

    fn subject(&self) -> &str {
        std::str::from_utf8(&self.subject[..self.subject_len]).unwrap_or("")
    }

    fn push(&mut self, text: &str) {
        let room = SUBJECT_MAX - self.subject_len;
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.subject[self.subject_len..self.subject_len + end]
            .copy_from_slice(&text.as_bytes()[..end]);
        self.subject_len += end;
        self.cut |= end < text.len();
    }

    fn level(&self) -> Level {
        self.best
            .map_or(Level::AllowedWithoutPermission, |r| r.level)
    }

    fn verdict(&self) -> Verdict {
        let rule = self.best.unwrap_or(&catalog::SAFE_EMPTY);
        Verdict {
            level: rule.level,
            rule: rule.id,
            reason: reason(rule, self.subject(), self.cut),
        }
    }
}

/// One simple command as the evaluator judged it: its text in the command it came from, how
/// deeply nested it is (0: the command itself; more: inside a substitution or a string run as
/// shell code) and the verdict on it alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub text: String,
    pub depth: u8,
    pub verdict: Verdict,
}

/// The findings of one evaluation. Without part recording every finding goes into `cur`; with
/// it, each simple command's findings are taken out of `cur` into a [`Part`] when it ends, and
/// kept in `total` for the verdict on the whole.
pub(crate) struct Acc {
    cur: Finding,
    total: Finding,
    parts: Option<Vec<Part>>,
    /// The command itself (not a nested text) holds a substitution.
    pub(crate) substituted: bool,
    /// The command itself could not be tokenised.
    pub(crate) unreadable: bool,
    /// A `cd` moved below the workspace root, so later parts are judged from there.
    pub(crate) moved: bool,
    /// This evaluation only asks whether a command would be disabled (see
    /// `Cx::would_be_disabled`), and asks that itself once per unknown program at most.
    pub(crate) probing: bool,
    pub(crate) context: Context,
}

/// What [`Acc::begin_nested`] set aside: the enclosing part's findings so far.
#[derive(Clone, Copy)]
pub(crate) struct Outer {
    cur: Finding,
    total: Finding,
}

impl Acc {
    pub(crate) fn new(context: Context) -> Self {
        Self {
            cur: Finding::NONE,
            total: Finding::NONE,
            parts: None,
            substituted: false,
            unreadable: false,
            moved: false,
            probing: false,
            context,
        }
    }

    /// An accumulator that also records every part.
    pub(crate) fn recording(context: Context) -> Self {
        Self {
            parts: Some(Vec::new()),
            ..Self::new(context)
        }
    }

    pub(crate) fn records(&self) -> bool {
        self.parts.is_some()
    }

    /// Records a finding; it replaces the current one only if it is strictly stricter or, at the
    /// same level, strictly more specific.
    pub(crate) fn note(&mut self, rule: &'static Rule, subject: &str) {
        self.note_parts(rule, &[subject]);
    }

    /// Like [`Acc::note`], with a subject made of words joined by spaces (`cargo test`).
    pub(crate) fn note_parts(&mut self, rule: &'static Rule, parts: &[&str]) {
        let rule = self.in_context(rule);
        self.cur.note_parts(rule, parts);
    }

    /// A rule as the context makes it: without containment a build or test step runs the
    /// repository's code unguarded; in a read-only run nothing may write.
    fn in_context(&self, rule: &'static Rule) -> &'static Rule {
        if rule.level != Level::AllowedWithoutPermission {
            return rule;
        }
        // By id: a `const` rule has no single address to compare.
        let build = rule.id == catalog::SAFE_BUILD.id;
        if build && !self.context.contained {
            return &catalog::REPO_CODE;
        }
        let writes = build || rule.id == catalog::SAFE_WRITE.id;
        if writes && self.context.read_only {
            return &catalog::READONLY_WRITE;
        }
        rule
    }

    /// Ends a part: its findings go to the whole, and to the record under `text` if one is kept.
    pub(crate) fn end_part(&mut self, text: Option<&str>, depth: u8) {
        if let (Some(parts), Some(text)) = (self.parts.as_mut(), text) {
            parts.push(Part {
                text: text.to_owned(),
                depth,
                verdict: self.cur.verdict(),
            });
        }
        self.total.merge(&self.cur);
        self.cur = Finding::NONE;
    }

    /// Starts a text nested in the current part (a substitution, `sh -c CODE`).
    pub(crate) fn begin_nested(&mut self) -> Outer {
        Outer {
            cur: std::mem::replace(&mut self.cur, Finding::NONE),
            total: std::mem::replace(&mut self.total, Finding::NONE),
        }
    }

    /// Ends a nested text: all its findings belong to the enclosing part.
    pub(crate) fn end_nested(&mut self, outer: Outer) {
        let mut inner = std::mem::replace(&mut self.total, outer.total);
        inner.merge(&self.cur);
        self.cur = outer.cur;
        self.cur.merge(&inner);
    }

    pub(crate) fn level(&self) -> Level {
        self.cur.level().max(self.total.level())
    }

    pub(crate) fn into_verdict(mut self) -> Verdict {
        self.total.merge(&self.cur);
        self.total.verdict()
    }

    /// The verdict on the whole and the recorded parts.
    pub(crate) fn into_parts(mut self) -> (Verdict, Vec<Part>) {
        self.total.merge(&self.cur);
        (self.total.verdict(), self.parts.unwrap_or_default())
    }
}

/// The words shown to a user: the rule's text after its subject, or the text alone when the rule
/// is a full sentence.
fn reason(rule: &Rule, subject: &str, cut: bool) -> String {
    if rule.why.starts_with(|c: char| c.is_ascii_uppercase()) {
        return rule.why.to_owned();
    }
    let mut out = String::with_capacity(subject.len() + rule.why.len() + 8);
    if subject.is_empty() {
        out.push_str("the command ");
    } else {
        out.push('`');
        out.push_str(subject);
        if cut {
            out.push('…');
        }
        out.push_str("` ");
    }
    out.push_str(rule.why);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strictest_and_then_most_specific_finding_wins() {
        let mut acc = Acc::new(Context::CONTAINED);
        acc.note(&catalog::SAFE_READ, "ls");
        acc.note(&catalog::UNKNOWN, "frob");
        acc.note(&catalog::NETWORK, "curl");
        acc.note(&catalog::UNKNOWN, "other");
        acc.note(&catalog::PIPE_TO_SHELL, "sh");
        acc.note(&catalog::NETWORK, "wget");
        let verdict = acc.into_verdict();
        assert_eq!(verdict.rule, "pipe.to_shell");
        assert_eq!(verdict.reason, "`sh` runs the text piped into it as code");
    }

    #[test]
    fn long_subjects_are_cut_on_a_character_boundary() {
        let mut acc = Acc::new(Context::CONTAINED);
        let long = "é".repeat(40);
        acc.note(&catalog::UNKNOWN, &long);
        let verdict = acc.into_verdict();
        assert!(
            verdict
                .reason
                .starts_with(&format!("`{}…`", "é".repeat(24)))
        );
    }

    #[test]
    fn nothing_to_run_is_safe_and_says_so() {
        let verdict = Acc::new(Context::CONTAINED).into_verdict();
        assert_eq!(verdict.level, Level::AllowedWithoutPermission);
        assert_eq!(verdict.rule, "safe.empty");
    }
}
