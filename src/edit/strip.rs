//! Whitespace-ignored matching, in linear time and one extra copy of the text.
//!
//! Every JavaScript-`\s` character is removed from both sides, the stripped search is
//! found in the stripped file with `memmem`, and each hit is mapped back to the original.
//! A match starts at its first non-whitespace character and ends just after its last one,
//! so whitespace around it stays in the file.
//!
//! No per-byte offset table is built: the file is seen as a sequence of maximal
//! non-whitespace runs, and the stripped text is exactly those runs concatenated. Mapping
//! back walks the runs once, in step with the (sorted) hits, so the only extra memory is
//! the stripped copy (at most the file's size).

use memchr::memmem;

use super::find::Span;
use super::text::{is_js_space, is_js_space_byte};

/// Whether a whitespace character starts at byte `i` of `text` (a char boundary), and
/// the width of the character there.
#[inline]
fn space_at(text: &str, i: usize) -> (bool, usize) {
    let Some(&lead) = text.as_bytes().get(i) else {
        return (false, 1);
    };
    if lead < 0x80 {
        return (is_js_space_byte(lead), 1);
    }
    let width = match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    // Only these lead bytes begin a non-ASCII whitespace character.
    let maybe_space = matches!(lead, 0xC2 | 0xE1 | 0xE2 | 0xE3 | 0xEF);
    let is_space = maybe_space && text[i..].chars().next().is_some_and(is_js_space);
    (is_space, width)
}

/// The bytes of `text` without its whitespace characters. Whole characters are dropped
/// from valid UTF-8, so the result is valid UTF-8 too; `memmem` only needs the bytes.
fn strip(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    // Write every byte and advance only past kept ones: no branch per ASCII byte.
    let mut out = vec![0; bytes.len()];
    let mut kept = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b < 0x80 {
            out[kept] = b;
            kept += usize::from(!is_js_space_byte(b));
            i += 1;
            continue;
        }
        let (space, width) = space_at(text, i);
        if !space {
            out[kept..kept + width].copy_from_slice(&bytes[i..i + width]);
            kept += width;
        }
        i += width;
    }
    out.truncate(kept);
    out
}

/// Iterator over the maximal runs of non-whitespace characters, as byte ranges.
struct Runs<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Runs<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    /// The first offset from `i` whose character is whitespace exactly when `space` is false.
    #[inline]
    fn scan_while(&self, mut i: usize, space: bool) -> usize {
        while i < self.text.len() {
            let (is_space, width) = space_at(self.text, i);
            if is_space != space {
                break;
            }
            i += width;
        }
        i
    }
}

impl Iterator for Runs<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        let start = self.scan_while(self.pos, true);
        if start >= self.text.len() {
            self.pos = self.text.len();
            return None;
        }
        self.pos = self.scan_while(start, false);
        Some((start, self.pos))
    }
}

/// Non-overlapping whitespace-ignored matches of `search` in `content`.
pub(crate) fn find(content: &str, search: &str, first_only: bool) -> Vec<Span> {
    let needle = strip(search);
    if needle.is_empty() {
        return Vec::new();
    }
    let hits: Vec<Span> = {
        let hay = strip(content);
        let iter = memmem::find_iter(&hay, &needle);
        let spans = iter.map(|s| (s, s + needle.len()));
        if first_only {
            spans.take(1).collect()
        } else {
            spans.collect()
        }
    };
    map_back(content, &hits)
}

/// Maps sorted, non-overlapping spans of the stripped text to spans of `content`.
fn map_back(content: &str, hits: &[Span]) -> Vec<Span> {
    let mut out = Vec::with_capacity(hits.len());
    let mut runs = Runs::new(content);
    let mut run = runs.next();
    // Offset in the stripped text where the current run begins.
    let mut base = 0;
    for &(s, e) in hits {
        // Advance to the run holding stripped offset `s` (s < base + run length) ...
        while let Some((a, b)) = run {
            if s < base + (b - a) {
                break;
            }
            base += b - a;
            run = runs.next();
        }
        let Some((a, _)) = run else { break };
        let start = a + (s - base);
        // ... and to the run holding the last matched byte (e <= base + run length).
        while let Some((a, b)) = run {
            if e <= base + (b - a) {
                break;
            }
            base += b - a;
            run = runs.next();
        }
        let Some((a, _)) = run else { break };
        out.push((start, a + (e - base)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::text::random_text;
    use super::*;

    /// The obvious implementation: a table from stripped char index to original offset.
    fn naive(content: &str, search: &str) -> Vec<Span> {
        let kept: Vec<(usize, char)> = content
            .char_indices()
            .filter(|&(_, c)| !is_js_space(c))
            .collect();
        let hay: String = kept.iter().map(|&(_, c)| c).collect();
        let needle: String = search.chars().filter(|&c| !is_js_space(c)).collect();
        let char_at = |byte: usize| hay[..byte].chars().count();
        hay.match_indices(&needle)
            .map(|(s, m)| {
                let (first, last) = (char_at(s), char_at(s + m.len()) - 1);
                (kept[first].0, kept[last].0 + kept[last].1.len_utf8())
            })
            .collect()
    }

    #[test]
    fn agrees_with_a_naive_mapping_on_random_text() {
        let alphabet = [
            "a", "b", " ", "\n", "\t", "é", "🌍", "\u{3000}", "\u{A0}", "\u{85}", "\u{FEFF}",
        ];
        let mut seed = 7;
        for _ in 0..500 {
            let content = random_text(&mut seed, 40, &alphabet);
            let search = random_text(&mut seed, 3, &alphabet);
            if search.chars().all(is_js_space) {
                continue;
            }
            assert_eq!(
                find(&content, &search, false),
                naive(&content, &search),
                "{content:?} / {search:?}"
            );
        }
    }

    #[test]
    fn runs_skip_unicode_whitespace() {
        let text = " ab\u{3000}c\u{A0}\u{FEFF}d é ";
        let runs: Vec<&str> = Runs::new(text).map(|(a, b)| &text[a..b]).collect();
        assert_eq!(runs, vec!["ab", "c", "d", "é"]);
        assert_eq!(strip(text), "abcdé".as_bytes());
    }

    #[test]
    fn matches_map_back_without_surrounding_whitespace() {
        let content = "x  a b\n c  y a\tb c";
        let spans = find(content, "abc", false);
        let texts: Vec<&str> = spans.iter().map(|&(s, e)| &content[s..e]).collect();
        assert_eq!(texts, vec!["a b\n c", "a\tb c"]);
        assert_eq!(find(content, "abc", true).len(), 1);
    }
}
