//! Combining findings: every part of a command reports the rules it triggers, and the strictest
//! finding (by level, then by how specific its rule is) decides the verdict. The subject of the
//! deciding finding (a program, path or variable) is kept in a small inline buffer so that
//! evaluating a command allocates nothing until the final reason is written.

use super::catalog::{self, Rule};
use super::{Level, Verdict};

/// Longest subject quoted in a reason, in bytes; longer ones are cut at a character boundary.
const SUBJECT_MAX: usize = 48;

/// The strictest finding seen so far.
pub(crate) struct Acc {
    best: Option<&'static Rule>,
    subject: [u8; SUBJECT_MAX],
    subject_len: usize,
    cut: bool,
}

impl Acc {
    pub(crate) fn new() -> Self {
        Self {
            best: None,
            subject: [0; SUBJECT_MAX],
            subject_len: 0,
            cut: false,
        }
    }

    /// Records a finding; it replaces the current one only if it is strictly stricter or, at the
    /// same level, strictly more specific.
    pub(crate) fn note(&mut self, rule: &'static Rule, subject: &str) {
        self.note_parts(rule, &[subject]);
    }

    /// Like [`Acc::note`], with a subject made of words joined by spaces (`cargo test`).
    pub(crate) fn note_parts(&mut self, rule: &'static Rule, parts: &[&str]) {
        if let Some(best) = self.best
            && (rule.level, rule.weight) <= (best.level, best.weight)
        {
            return;
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

    pub(crate) fn level(&self) -> Level {
        self.best
            .map_or(Level::AllowedWithoutPermission, |r| r.level)
    }

    pub(crate) fn into_verdict(self) -> Verdict {
        let rule = self.best.unwrap_or(&catalog::SAFE_EMPTY);
        let subject = std::str::from_utf8(&self.subject[..self.subject_len]).unwrap_or("");
        Verdict {
            level: rule.level,
            rule: rule.id,
            reason: reason(rule, subject, self.cut),
        }
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
        let mut acc = Acc::new();
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
        let mut acc = Acc::new();
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
        let verdict = Acc::new().into_verdict();
        assert_eq!(verdict.level, Level::AllowedWithoutPermission);
        assert_eq!(verdict.rule, "safe.empty");
    }
}
