//! Graded matching: locate a search text in a file with the first strategy that works.
//!
//! The order is Continue's: a blank search matches at offset 0; then exact, trimmed
//! (leading and trailing whitespace removed from the search), case-insensitive and
//! whitespace-ignored. One strategy is chosen for the whole file — the first that finds
//! anything — and all its non-overlapping matches are returned, left to right, each
//! search resuming where the previous match ended ("aaaa" holds "aa" twice).

use memchr::memmem;

use super::text::{is_blank, trim_js};
use super::{Match, Strategy, fold, strip};

/// A matched byte range `(start, end)` in the searched content.
pub(crate) type Span = (usize, usize);

/// The first match of the first strategy that finds `search` in `content`, or `None`.
pub fn find_match(content: &str, search: &str) -> Option<Match> {
    let (strategy, spans) = locate(content, search, true)?;
    let &(start, end) = spans.first()?;
    Some(Match {
        start,
        end,
        strategy,
    })
}

/// Every non-overlapping match of the first strategy that finds `search` in `content`;
/// empty when nothing matches. A blank `search` gives one empty match at offset 0.
pub fn find_matches(content: &str, search: &str) -> Vec<Match> {
    let Some((strategy, spans)) = locate(content, search, false) else {
        return Vec::new();
    };
    spans
        .into_iter()
        .map(|(start, end)| Match {
            start,
            end,
            strategy,
        })
        .collect()
}

/// Runs the strategies in order; returns the first that found something, with its spans
/// (only the first span when `first_only`).
fn locate(content: &str, search: &str, first_only: bool) -> Option<(Strategy, Vec<Span>)> {
    if is_blank(search) {
        return Some((Strategy::EmptySearch, vec![(0, 0)]));
    }
    let found = |spans: Vec<Span>, strategy| (!spans.is_empty()).then_some((strategy, spans));
    if let Some(hit) = found(literal(content, search, first_only), Strategy::ExactMatch) {
        return Some(hit);
    }
    let trimmed = trim_js(search);
    if trimmed.len() != search.len() {
        let spans = literal(content, trimmed, first_only);
        if let Some(hit) = found(spans, Strategy::TrimmedMatch) {
            return Some(hit);
        }
    }
    let spans = fold::find(content, search, first_only);
    if let Some(hit) = found(spans, Strategy::CaseInsensitiveMatch) {
        return Some(hit);
    }
    found(
        strip::find(content, search, first_only),
        Strategy::WhitespaceIgnoredMatch,
    )
}

/// Non-overlapping occurrences of `needle` (non-empty) in `content`.
fn literal(content: &str, needle: &str, first_only: bool) -> Vec<Span> {
    let hits = memmem::find_iter(content.as_bytes(), needle.as_bytes());
    let spans = hits.map(|start| (start, start + needle.len()));
    if first_only {
        spans.take(1).collect()
    } else {
        spans.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(content: &str, search: &str) -> Vec<(usize, usize, &'static str)> {
        let found = find_matches(content, search);
        found
            .iter()
            .map(|m| (m.start, m.end, m.strategy.name()))
            .collect()
    }

    #[test]
    fn one_strategy_is_chosen_for_the_whole_file() {
        // An exact hit wins; the differently-cased "FOO" is not a second occurrence.
        assert_eq!(spans("foo\nFOO", "foo"), vec![(0, 3, "exactMatch")]);
        // Same for an exact hit followed by a whitespace-only variant.
        assert_eq!(spans("a b xx ab", "a b"), vec![(0, 3, "exactMatch")]);
    }

    #[test]
    fn matches_do_not_overlap() {
        assert_eq!(spans("aaaaa", "aa").len(), 2);
    }

    #[test]
    fn blank_search_matches_once_at_the_start() {
        assert_eq!(spans("abc", " \n\t"), vec![(0, 0, "emptySearch")]);
        assert_eq!(find_match("", "x"), None);
    }
}
