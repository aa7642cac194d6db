//! Character-level helpers for the scanner: UTF-8 sequence lengths, the Unicode spaces and
//! invisible characters a reader would not notice, and the escapes of `$'…'` strings and
//! backtick substitutions.

/// Byte length of a Unicode space (no-break, ideographic, …) starting `rest`, or 0. The shell
/// does not split on these, but a reader sees a space, so the evaluator splits as the reader
/// would.
pub(super) fn unicode_blank(rest: &[u8]) -> usize {
    match rest {
        [0xC2, 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..] | [0xE3, 0x80, 0x80, ..] => 3,
        [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..] | [0xE2, 0x81, 0x9F, ..] => 3,
        _ => 0,
    }
}

/// Byte length of an invisible character (zero-width space, joiner, BOM) starting `rest`, or 0.
pub(super) fn invisible(rest: &[u8]) -> usize {
    match rest {
        [0xE2, 0x80, 0x8B..=0x8D, ..] | [0xE2, 0x81, 0xA0, ..] | [0xEF, 0xBB, 0xBF, ..] => 3,
        _ => 0,
    }
}

/// Length of the UTF-8 sequence that starts with `lead`.
pub(super) fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Inside backticks, `\\`, `` \` `` and `\$` stand for the character itself.
pub(super) fn unescape_backticks(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next @ ('\\' | '`' | '$'))) => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// Decodes the escape after a backslash in `$'…'` (`rest` starts after the backslash) into
/// `out`; returns how many bytes of `rest` it used.
pub(super) fn decode_escape(rest: &[u8], out: &mut String) -> usize {
    let Some(&c) = rest.first() else {
        out.push('\\');
        return 0;
    };
    let simple = match c {
        b'a' => Some('\x07'),
        b'b' => Some('\x08'),
        b'e' | b'E' => Some('\x1b'),
        b'f' => Some('\x0c'),
        b'n' => Some('\n'),
        b'r' => Some('\r'),
        b't' => Some('\t'),
        b'v' => Some('\x0b'),
        b'\\' | b'\'' | b'"' | b'?' => Some(char::from(c)),
        _ => None,
    };
    if let Some(ch) = simple {
        out.push(ch);
        return 1;
    }
    let (radix, max, skip) = match c {
        b'x' => (16, 2, 1),
        b'u' => (16, 4, 1),
        b'U' => (16, 8, 1),
        b'0'..=b'7' => (8, 3, 0),
        b'c' if rest.len() > 1 => {
            // Bash makes a control character of the next byte; the whole next character
            // is consumed so the scan stays on a character boundary (`\cé` panicked).
            out.push(char::from(rest[1] & 0x1f));
            return 1 + utf8_len(rest[1]);
        }
        _ => {
            out.push('\\');
            return 0;
        }
    };
    let digits = rest[skip..]
        .iter()
        .take(max)
        .take_while(|d| char::from(**d).is_digit(radix))
        .count();
    if digits == 0 {
        out.push('\\');
        return 0;
    }
    let value = rest[skip..skip + digits].iter().fold(0u32, |acc, d| {
        acc * radix + char::from(*d).to_digit(radix).unwrap_or(0)
    });
    if value != 0 {
        out.push(char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    skip + digits
}
