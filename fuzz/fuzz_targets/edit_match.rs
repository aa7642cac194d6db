//! Fuzz target: the edit matcher and find-and-replace on arbitrary content, search and
//! replacement texts.
//!
//! Input layout: `content \0 old \0 new`, and an optional fourth part whose presence means
//! `replace_all`. The invariant: an edit changes the matched spans and nothing else — every
//! byte of the file outside them is still there, in order; an exact match is replaced by
//! the new text verbatim. Spans lie on character boundaries, in order, without overlap.
#![no_main]

use cn_run::edit::{EditSpec, Strategy, apply_edits, find_and_replace, find_match, find_matches};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(4, '\0');
    let content = parts.next().unwrap_or_default();
    let old = parts.next().unwrap_or_default();
    let new = parts.next().unwrap_or_default();
    let replace_all = parts.next().is_some();

    let matches = find_matches(content, old);
    let first = find_match(content, old);
    assert_eq!(
        first,
        matches.first().cloned(),
        "find_match disagrees with find_matches"
    );
    let mut end = 0;
    for m in &matches {
        assert!(
            m.start >= end && m.start <= m.end && m.end <= content.len(),
            "{matches:?}"
        );
        assert!(content.is_char_boundary(m.start) && content.is_char_boundary(m.end));
        if m.strategy == Strategy::ExactMatch {
            assert_eq!(&content[m.start..m.end], old);
        }
        end = m.end;
    }

    let Ok(done) = find_and_replace(content, old, new, replace_all, 0) else {
        return;
    };
    assert_eq!(done.replacements, matches.len());
    let out = done.content.as_str();
    // The gaps between matches, in order, with something (the replacement) between them.
    let mut gaps = Vec::with_capacity(matches.len() + 1);
    let mut from = 0;
    for m in &matches {
        gaps.push(&content[from..m.start]);
        from = m.end;
    }
    gaps.push(&content[from..]);
    if matches!(done.strategy, Strategy::ExactMatch | Strategy::EmptySearch) {
        assert_eq!(
            out,
            gaps.join(new),
            "an exact edit changed more than its spans"
        );
    }
    let (head, tail) = (gaps[0], gaps[gaps.len() - 1]);
    assert!(out.starts_with(head), "the text before the match changed");
    assert!(
        out.len() >= head.len() + tail.len() && out.ends_with(tail),
        "the text after the match changed"
    );
    let mut at = head.len();
    for gap in &gaps[1..gaps.len() - 1] {
        let pos = out[at..]
            .find(gap)
            .expect("a text between two matches was lost");
        at += pos + gap.len();
    }

    // The same edit twice in a batch: all or nothing, never a panic. Skipped when the first
    // pass already multiplied the text (every match × `new`): a second pass over that is
    // quadratic in the input, which is the fuzzer's doing, not a finding.
    if out.len() > 1 << 16 {
        return;
    }
    // The same edit twice in a batch: all or nothing, never a panic.
    let spec = EditSpec {
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all,
    };
    let _ = apply_edits(content, &[spec.clone(), spec]);
});
