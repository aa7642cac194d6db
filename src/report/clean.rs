//! One cleaning of program output for every report that shows it (junit.xml, the step
//! summary, annotations): terminal escape sequences removed, each ending at the latest at
//! its line's end (an unterminated `ESC ]` must not swallow the rest of the output), and
//! every character XML 1.0 forbids dropped, so any reader accepts the text.

/// What the characters after an escape introducer are.
enum Seq {
    /// `CSI`: parameters and intermediates up to a final byte in `@`..`~`.
    Csi,
    /// `OSC`, `DCS`, `SOS`, `PM`, `APC`: a string up to `BEL` or `ST`.
    Str,
    /// `ESC` + intermediates + one final byte (`ESC ( B`, `ESC 7`, `ESC c`).
    Short,
}

/// `s` with terminal escape sequences and control characters removed; tabs kept, line
/// ends made `\n`; no character that XML 1.0 forbids.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let seq = match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => Some(Seq::Csi),
                Some(']' | 'P' | 'X' | '^' | '_') => Some(Seq::Str),
                Some(&n) if (' '..='~').contains(&n) => Some(Seq::Short),
                _ => None,
            },
            '\u{9b}' => Some(Seq::Csi),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => Some(Seq::Str),
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push('\n');
                continue;
            }
            '\n' | '\t' => {
                out.push(c);
                continue;
            }
            c if is_dropped(c) => continue,
            c => {
                out.push(c);
                continue;
            }
        };
        if c == '\u{1b}' && seq.is_some() && !matches!(seq, Some(Seq::Short)) {
            chars.next(); // the introducer's second character
        }
        match seq {
            Some(Seq::Csi) => skip_csi(&mut chars),
            Some(Seq::Str) => skip_string(&mut chars),
            Some(Seq::Short) => skip_short(&mut chars),
            None => {}
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Parameters and intermediates, then the final byte; a character outside those ranges
/// (a line end included) ends the sequence and is kept.
fn skip_csi(chars: &mut Chars<'_>) {
    while let Some(&n) = chars.peek() {
        if ('\u{20}'..='\u{3f}').contains(&n) {
            chars.next();
        } else {
            if ('\u{40}'..='\u{7e}').contains(&n) {
                chars.next();
            }
            return;
        }
    }
}

/// A control string: up to `BEL`, `ESC \` or `ST`, and never past the line's end.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(&n) = chars.peek() {
        match n {
            '\n' | '\r' => return,
            '\u{7}' | '\u{9c}' => {
                chars.next();
                return;
            }
            '\u{1b}' => {
                chars.next();
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {
                chars.next();
            }
        }
    }
}

/// `ESC`, intermediates (space..`/`), one final character.
fn skip_short(chars: &mut Chars<'_>) {
    while chars
        .next_if(|n| ('\u{20}'..='\u{2f}').contains(n))
        .is_some()
    {}
    chars.next_if(|n| ('\u{30}'..='\u{7e}').contains(n));
}

/// Controls (C0 but tab and line ends, DEL, C1) and the characters XML 1.0 forbids
/// (`U+FFFE`, `U+FFFF`; surrogates cannot occur in a Rust string).
fn is_dropped(c: char) -> bool {
    c.is_control() || matches!(c, '\u{fffe}' | '\u{ffff}')
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production).
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_go_and_the_text_stays() {
        assert_eq!(clean("\u{1b}[1;31merror\u{1b}[0m: x"), "error: x");
        assert_eq!(clean("\u{9b}32mok\u{9b}0m"), "ok");
        assert_eq!(clean("a\u{1b}(Bb\u{1b}7c\u{1b}=d"), "abcd");
        assert_eq!(clean("tab\there"), "tab\there");
    }

    #[test]
    fn an_unterminated_string_sequence_ends_at_its_line() {
        for intro in [
            "\u{1b}]", "\u{1b}P", "\u{1b}X", "\u{1b}^", "\u{1b}_", "\u{9d}",
        ] {
            let text = format!("one {intro}0;title never closed\ntwo\nthree");
            assert_eq!(clean(&text), "one \ntwo\nthree", "{intro:?}");
        }
        assert_eq!(
            clean("a\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{1b}\\b"),
            "alinkb"
        );
        assert_eq!(clean("x\u{1b}[12;\nrest"), "x\nrest");
        assert_eq!(clean("x\u{1b}\nrest\u{1b}"), "x\nrest");
    }

    #[test]
    fn every_character_xml_forbids_is_dropped() {
        let hostile: Vec<String> = (0u32..0x110000)
            .filter_map(char::from_u32)
            .filter(|c| !is_xml_char(*c) || c.is_control())
            .map(|c| format!("a{c}b"))
            .collect();
        assert!(hostile.len() > 60, "{}", hostile.len());
        let cleaned = clean(&format!("{}\nend", hostile.join("\n")));
        assert!(cleaned.chars().all(is_xml_char), "{cleaned:?}");
        assert!(
            cleaned.starts_with("ab\n") && cleaned.ends_with("\nend"),
            "{cleaned:?}"
        );
        assert_eq!(clean("a\r\nb\rc"), "a\nb\nc");
    }
}
