//! Small text helpers shared by the edit engine: JavaScript's notion of whitespace,
//! trimming, blank-line handling and UTF-16 offset conversion.
//!
//! Continue is written in JavaScript, so "whitespace" in its matching rules means the
//! regex class `\s` (which is also what `String.prototype.trim` removes). That set differs
//! from Rust's `char::is_whitespace` in two places (U+0085 is not in it, U+FEFF is), so we
//! define it once here and use it everywhere. Offsets in Continue's tests are UTF-16 code
//! units; ours are bytes, hence the converters.

/// Whether `c` is in JavaScript's `\s` class.
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Whether the ASCII byte `b` is in JavaScript's `\s` class.
pub(crate) fn is_js_space_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// `s` without leading and trailing JavaScript whitespace (JS `trim()`).
pub(crate) fn trim_js(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// Whether `s` is empty or only JavaScript whitespace.
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars().all(is_js_space)
}

/// The leading whitespace of `line`.
pub(crate) fn leading_space(line: &str) -> &str {
    let rest = line.trim_start_matches(is_js_space);
    &line[..line.len() - rest.len()]
}

/// `lines` without the blank lines at one end: the start, or the end when `from_end`.
/// A line is blank when it is empty or only whitespace. Returns a sub-slice.
pub fn trim_empty_lines<S: AsRef<str>>(lines: &[S], from_end: bool) -> &[S] {
    let blank = |l: &S| is_blank(l.as_ref());
    if from_end {
        let keep = lines.iter().rposition(|l| !blank(l)).map_or(0, |i| i + 1);
        &lines[..keep]
    } else {
        let skip = lines.iter().position(|l| !blank(l)).unwrap_or(lines.len());
        &lines[skip..]
    }
}

/// Length of `s` in UTF-16 code units (JavaScript's `length`).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The UTF-16 offset of byte offset `byte` in `content`. A `byte` past the end counts as
/// the end; one inside a character counts as that character's start.
pub fn byte_to_utf16(content: &str, byte: usize) -> usize {
    let mut at = byte.min(content.len());
    while !content.is_char_boundary(at) {
        at -= 1;
    }
    utf16_len(&content[..at])
}

/// The byte offset of UTF-16 offset `unit` in `content`, or `None` when `unit` is past the
/// end or falls between the two halves of a surrogate pair.
pub fn utf16_to_byte(content: &str, unit: usize) -> Option<usize> {
    let mut units = 0;
    for (byte, c) in content.char_indices() {
        if units == unit {
            return Some(byte);
        }
        units += c.len_utf16();
        if units > unit {
            return None;
        }
    }
    (units == unit).then_some(content.len())
}

/// Deterministic pseudo-random text drawn from `alphabet`, for differential tests.
#[cfg(test)]
pub(crate) fn random_text(seed: &mut u64, len: usize, alphabet: &[&str]) -> String {
    (0..len)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[(*seed >> 33) as usize % alphabet.len()]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_whitespace_differs_from_rust_where_javascript_does() {
        assert!(is_js_space('\u{FEFF}') && !'\u{FEFF}'.is_whitespace());
        assert!(!is_js_space('\u{85}') && '\u{85}'.is_whitespace());
        assert_eq!(trim_js("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(leading_space("\t  x = 1"), "\t  ");
    }

    #[test]
    fn utf16_offsets_round_trip_through_surrogate_pairs() {
        let s = "a🌍b";
        assert_eq!(utf16_len(s), 4);
        assert_eq!(byte_to_utf16(s, 5), 3);
        assert_eq!(byte_to_utf16(s, 2), 1); // inside the emoji: its start
        assert_eq!(utf16_to_byte(s, 3), Some(5));
        assert_eq!(utf16_to_byte(s, 2), None);
        assert_eq!(utf16_to_byte(s, 4), Some(6));
        assert_eq!(utf16_to_byte(s, 5), None);
    }
}
