//! Obfuscation detectors: hex and Unicode escapes anywhere in the raw command (`\x72\x6d` is `rm`),
//! `echo -e` with escapes, and decoders (`base64 -d`, `xxd -r`). Hiding text from a reader is how
//! a dangerous command gets past review, so each of these needs permission.

use super::catalog;
use super::cx::Cx;
use super::tokenize::Word;

/// Whether the raw text holds `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub(crate) fn has_hex_escapes(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(k) = b[from..].iter().position(|&c| c == b'\\') {
        let i = from + k;
        let digits = match b.get(i + 1) {
            Some(b'x') => 2,
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => 0,
        };
        let end = i + 2 + digits;
        if digits > 0 && end <= b.len() && b[i + 2..end].iter().all(u8::is_ascii_hexdigit) {
            return true;
        }
        from = i + 1;
    }
    false
}

/// `echo`: safe, unless `-e` turns escapes in its arguments into hidden characters.
pub(crate) fn echo(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let interprets = args
        .iter()
        .map(|w| &*w.text)
        .take_while(|a| {
            a.len() > 1 && a.starts_with('-') && a[1..].bytes().all(|c| b"neE".contains(&c))
        })
        .any(|a| a.contains('e'));
    if interprets && args.iter().any(|w| w.text.contains('\\')) {
        cx.note(&catalog::OBF_ECHO_E, "echo -e");
    } else {
        cx.note(&catalog::SAFE_READ, "echo");
    }
}

/// `base64` encodes safely; decoding hides what the data is.
pub(crate) fn base64(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let decodes = args.iter().any(|w| {
        matches!(&*w.text, "-d" | "-D" | "--decode")
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('d'))
    });
    if decodes {
        cx.note(&catalog::OBF_BASE64, "base64 -d");
    } else {
        cx.note(&catalog::SAFE_READ, "base64");
    }
}

/// `xxd` dumps safely; `-r` turns hex back into bytes.
pub(crate) fn xxd(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args
        .iter()
        .any(|w| matches!(&*w.text, "-r" | "-revert" | "--revert"))
    {
        cx.note(&catalog::OBF_BASE64, "xxd -r");
    } else {
        cx.note(&catalog::SAFE_READ, "xxd");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_unicode_escapes_are_found() {
        assert!(has_hex_escapes(r"printf '\x72\x6d'"));
        assert!(has_hex_escapes(r"echo -e '\u0072'"));
        assert!(!has_hex_escapes(r"printf '%s\n' x"));
        assert!(!has_hex_escapes(r"echo \x"));
        assert!(!has_hex_escapes("echo \\x7"));
    }
}
