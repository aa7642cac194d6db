//! Rules for `sed`: printing and substituting to standard output are read-only (`sed -n 1,5p` is
//! one of the CI commands cn-run allows); `-i` edits files in place; a script whose `w`, `W` or
//! `e` commands (or `s///w`, `s///e` flags) write files or run commands needs permission, and so
//! does a script file, which cannot be checked.

use super::catalog::*;
use super::cx::Cx;
use super::tokenize::Word;

pub(crate) fn sed(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    // GNU sed takes options anywhere, so every argument is looked at.
    let mut scripts: Vec<&str> = Vec::new();
    let mut first_positional = None;
    let mut options_done = false;
    let mut i = 0;
    while let Some(text) = args.get(i).map(|w| &*w.text) {
        i += 1;
        if options_done || text.len() < 2 || !text.starts_with('-') {
            first_positional = first_positional.or(Some(text));
        } else if text == "--" {
            options_done = true;
        } else if text == "-e" || text == "--expression" {
            scripts.extend(args.get(i).map(|w| &*w.text));
            i += 1;
        } else if let Some(script) = text.strip_prefix("--expression=") {
            scripts.push(script);
        } else if text.starts_with("--in-place") || is_short_cluster_with(text, 'i') || text == "-I"
        {
            return cx.note(&EDIT_IN_PLACE, "sed -i");
        } else if text == "-f" || text.starts_with("--file") || is_short_cluster_with(text, 'f') {
            return cx.note(&RUNS_COMMANDS, "sed -f");
        } else if text == "-l" {
            i += 1;
        }
    }
    if scripts.is_empty() {
        scripts.extend(first_positional);
    }
    if scripts.iter().all(|s| is_read_only(s)) {
        cx.note(&SAFE_READ, "sed");
    } else {
        cx.note(&RUNS_COMMANDS, "sed");
    }
}

fn is_short_cluster_with(text: &str, flag: char) -> bool {
    !text.starts_with("--")
        && text.starts_with('-')
        && text[1..].starts_with(|c: char| c.is_ascii_alphabetic())
        && {
            // Options before the flag must be flags without values, e.g. `-ni`, `-Ei.bak`.
            let letters = text[1..]
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or("");
            letters.contains(flag)
                && letters
                    .chars()
                    .take_while(|c| *c != flag)
                    .all(|c| "nEsruz".contains(c))
        }
}

/// Walks a sed script command by command; `w`, `W`, `e` and the `s///w`, `s///e` flags write
/// files or run commands. Anything not understood counts as unsafe.
fn is_read_only(script: &str) -> bool {
    let b = script.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b';') {
            i += 1;
        }
        if i >= b.len() {
            return true;
        }
        i = skip_address(b, i);
        while i < b.len() && (b[i] == b' ' || b[i] == b'!') {
            i += 1;
        }
        let Some(&cmd) = b.get(i) else { return true };
        i += 1;
        i = match cmd {
            b'{' | b'}' | b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'l' | b'n' | b'N'
            | b'p' | b'P' | b'x' | b'z' | b'F' | b'q' | b'Q' => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                i
            }
            b':' | b'b' | b't' | b'T' | b'a' | b'i' | b'c' | b'r' | b'R' | b'#' | b'v' => {
                line_end(b, i, cmd)
            }
            b's' | b'y' => match substitution(b, i, cmd) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
}

/// Skips `N`, `$`, `/re/I`, `\%re%`, `first~step` and a `,` second address.
fn skip_address(b: &[u8], mut i: usize) -> usize {
    for part in 0..2 {
        match b.get(i) {
            Some(c) if c.is_ascii_digit() || matches!(c, b'$' | b'~' | b'+') => {
                while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'$' | b'~' | b'+')) {
                    i += 1;
                }
            }
            Some(b'/' | b'\\') => {
                let delim_at = if b[i] == b'\\' { i + 1 } else { i };
                let Some(&delim) = b.get(delim_at) else {
                    return b.len();
                };
                i = delimited_end(b, delim_at + 1, delim);
                while i < b.len() && matches!(b[i], b'I' | b'M') {
                    i += 1;
                }
            }
            _ => return i,
        }
        if part == 0 && b.get(i) == Some(&b',') {
            i += 1;
        } else {
            return i;
        }
    }
    i
}

/// Index after the unescaped `delim` that closes a part starting at `i`.
fn delimited_end(b: &[u8], mut i: usize, delim: u8) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == delim => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// End of a command that runs to the end of the line (labels, text, file names); `;` also ends
/// labels and branches.
fn line_end(b: &[u8], mut i: usize, cmd: u8) -> usize {
    let semicolon_ends = matches!(cmd, b'b' | b't' | b'T' | b'v' | b':');
    while i < b.len() && b[i] != b'\n' && !(semicolon_ends && b[i] == b';') {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// `s/re/rep/flags` or `y/abc/xyz/`; `None` when a flag writes a file or runs a command.
fn substitution(b: &[u8], i: usize, cmd: u8) -> Option<usize> {
    let &delim = b.get(i)?;
    let mut i = delimited_end(b, i + 1, delim);
    i = delimited_end(b, i, delim);
    if cmd == b'y' {
        return Some(i);
    }
    while i < b.len() && !matches!(b[i], b';' | b'\n' | b'}' | b' ') {
        if matches!(b[i], b'w' | b'W' | b'e') {
            return None;
        }
        i += 1;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for script in [
            "1,5p",
            "s/a/b/g",
            "/^#/d; s|x|y|2",
            "$!N;P;D",
            "y/abc/xyz/",
            "/start/,/end/{p}",
            "10q",
        ] {
            assert!(is_read_only(script), "{script}");
        }
        for script in [
            "w out.txt",
            "s/a/b/w out",
            "s/x/date/e",
            "1e rm -rf /",
            "/x/W log",
        ] {
            assert!(!is_read_only(script), "{script}");
        }
    }
}
