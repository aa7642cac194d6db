//! Case-insensitive matching whose offsets point into the original text.
//!
//! Both sides are lowercased character by character (Unicode default lowercase, as
//! JavaScript's `toLowerCase`, except that final sigma `ς` is folded to `σ` like every
//! other sigma so word position does not matter). Lowercasing can change length: `İ`
//! (2 bytes) becomes `i̇` (3 bytes), `ẞ` (3 bytes) becomes `ß` (2 bytes), the Kelvin sign
//! `K` (3 bytes) becomes `k` (1 byte). The rule we use to map back:
//!
//! * A match in the lowercased text counts only if it starts and ends on the boundary
//!   between the lowercase forms of two whole original characters. So the search `i`
//!   does not match inside `İ` (whose lowercase is `i` + U+0307), but `İ` matches `İ`
//!   and `i̇`.
//! * Such a match maps to exactly the original characters whose lowercase forms it
//!   covers, so offsets are always char boundaries and the replaced span is whole
//!   characters.
//!
//! To keep memory proportional to the text, the map stores one entry per character whose
//! lowercase form has a different byte length (or more than one char); everything between
//! two entries is a constant shift. ASCII text takes a fast path with no entries.

use memchr::memmem::Finder;

use super::find::Span;

/// One original character whose lowercase form is not a same-length single char.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    folded: usize,
    folded_len: usize,
    orig: usize,
    orig_len: usize,
}

/// Lowercased text plus what is needed to map its offsets back.
struct Folded {
    text: String,
    anchors: Vec<Anchor>,
}

fn push_folded(c: char, out: &mut String) {
    if c == 'ς' {
        out.push('σ');
    } else {
        out.extend(c.to_lowercase());
    }
}

/// `s` lowercased, as used for the search text (no offset map needed).
fn fold_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    s.chars().for_each(|c| push_folded(c, &mut out));
    out
}

fn fold(s: &str) -> Folded {
    if s.is_ascii() {
        return Folded {
            text: s.to_ascii_lowercase(),
            anchors: Vec::new(),
        };
    }
    let mut text = String::with_capacity(s.len());
    let mut anchors = Vec::new();
    let mut orig = 0;
    while orig < s.len() {
        // Copy a run of ASCII in one go: it lowercases in place, byte for byte.
        let ascii = s.as_bytes()[orig..]
            .iter()
            .take_while(|b| b.is_ascii())
            .count();
        if ascii > 0 {
            let at = text.len();
            text.push_str(&s[orig..orig + ascii]);
            text[at..].make_ascii_lowercase();
            orig += ascii;
            continue;
        }
        let Some(c) = s[orig..].chars().next() else {
            break;
        };
        let folded = text.len();
        push_folded(c, &mut text);
        let folded_len = text.len() - folded;
        let single = text[folded..].chars().nth(1).is_none();
        if folded_len != c.len_utf8() || !single {
            anchors.push(Anchor {
                folded,
                folded_len,
                orig,
                orig_len: c.len_utf8(),
            });
        }
        orig += c.len_utf8();
    }
    Folded { text, anchors }
}

impl Folded {
    /// The original offset of lowercased offset `at` (a char boundary of `self.text`), or
    /// `None` when `at` falls inside one character's lowercase expansion.
    fn to_original(&self, at: usize) -> Option<usize> {
        let before = self.anchors.partition_point(|a| a.folded <= at);
        let Some(a) = before.checked_sub(1).map(|i| self.anchors[i]) else {
            return Some(at);
        };
        if at == a.folded {
            Some(a.orig)
        } else if at < a.folded + a.folded_len {
            None
        } else {
            Some(a.orig + a.orig_len + (at - a.folded - a.folded_len))
        }
    }
}

/// Non-overlapping case-insensitive matches of `search` in `content`, in original offsets.
pub(crate) fn find(content: &str, search: &str, first_only: bool) -> Vec<Span> {
    let needle = fold_str(search);
    if needle.is_empty() {
        return Vec::new();
    }
    let hay = fold(content);
    let finder = Finder::new(needle.as_bytes());
    let bytes = hay.text.as_bytes();
    let mut spans = Vec::new();
    let mut pos = 0;
    while let Some(rel) = bytes.get(pos..).and_then(|rest| finder.find(rest)) {
        let (start, end) = (pos + rel, pos + rel + needle.len());
        match (hay.to_original(start), hay.to_original(end)) {
            (Some(s), Some(e)) => {
                spans.push((s, e));
                if first_only {
                    break;
                }
                pos = end;
            }
            // Misaligned: retry from the next character of the lowercased text.
            _ => pos = start + hay.text[start..].chars().next().map_or(1, char::len_utf8),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::super::text::random_text;
    use super::*;

    /// The obvious implementation: fold char by char, remember every boundary.
    fn naive(content: &str, search: &str) -> Vec<Span> {
        let mut hay = String::new();
        let mut boundary = std::collections::HashMap::new();
        for (orig, c) in content.char_indices() {
            boundary.insert(hay.len(), orig);
            push_folded(c, &mut hay);
        }
        boundary.insert(hay.len(), content.len());
        let needle = fold_str(search);
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(rel) = hay[pos..].find(&needle) {
            let (s, e) = (pos + rel, pos + rel + needle.len());
            match (boundary.get(&s), boundary.get(&e)) {
                (Some(&a), Some(&b)) => {
                    out.push((a, b));
                    pos = e;
                }
                _ => pos = s + hay[s..].chars().next().map_or(1, char::len_utf8),
            }
        }
        out
    }

    #[test]
    fn agrees_with_a_naive_mapping_on_random_text() {
        let alphabet = [
            "a", "A", "i", "I", "İ", "\u{307}", "ẞ", "ß", "σ", "Σ", "ς", "\u{212A}", "k", "🌍", " ",
        ];
        let mut seed = 11;
        for _ in 0..2000 {
            let content = random_text(&mut seed, 30, &alphabet);
            let search = random_text(&mut seed, 2, &alphabet);
            if search.trim().is_empty() {
                continue;
            }
            assert_eq!(
                find(&content, &search, false),
                naive(&content, &search),
                "{content:?} / {search:?}"
            );
        }
    }

    fn texts<'a>(content: &'a str, search: &str) -> Vec<&'a str> {
        let spans = find(content, search, false);
        spans.into_iter().map(|(s, e)| &content[s..e]).collect()
    }

    #[test]
    fn length_changing_lowercase_maps_back_to_whole_characters() {
        // "xi" would end inside the lowercase of İ (i + U+0307): not a match.
        assert_eq!(texts("xİ", "xi"), Vec::<&str>::new());
        assert_eq!(texts("İ", "\u{307}"), Vec::<&str>::new());
        assert_eq!(texts("xİ", "Xi\u{307}"), vec!["xİ"]);
        assert_eq!(texts("xİstanbul", "i̇stanbul"), vec!["İstanbul"]);
        assert_eq!(texts("xİstanbul", "İSTANBUL"), vec!["İstanbul"]);
        assert_eq!(texts("STRAẞE strasse", "straße"), vec!["STRAẞE"]);
        assert_eq!(texts("5 \u{212A}m", "5 km"), vec!["5 \u{212A}m"]);
    }

    #[test]
    fn final_sigma_matches_any_sigma() {
        assert_eq!(texts("ΟΔΟΣ οδος", "οδοσ"), vec!["ΟΔΟΣ", "οδος"]);
    }
}
