//! Rules for the everyday file and text tools whose safety depends on their options: `find`
//! (`-exec`, `-delete`), `sed` (`-i`, `w` and `e` commands), `awk` (`system`, output redirection),
//! `sort -o`, `uniq IN OUT`, `jq`/`yq` (`env`, `-i`), `rg --pre`, `tee`, `cd`, `mkdir`/`touch`, and
//! the archivers (creating is fine, extracting needs permission).

use super::catalog::*;
use super::paths;
use super::rules::{first_positional, positionals};
use super::simple::check_write;
use super::tokenize::Word;
use super::walk::Cx;

/// `cd DIR`: fine inside the workspace; leaving it (or going home) needs permission.
pub(crate) fn cd(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    match args.get(first_positional(args, &[])).map(|w| &*w.text) {
        None | Some("-") => cx.note(&CD_OUTSIDE, name),
        Some(dir) if paths::leaves_workspace(dir) => cx.note(&CD_OUTSIDE, dir),
        Some(_) => cx.note(&SAFE_SHELL, name),
    }
}

/// `mkdir`, `touch`: each path is judged as a write.
pub(crate) fn create(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    for path in positionals(args, &["-m", "-d", "-t", "-r"]) {
        check_write(path, cx);
    }
    cx.note(&SAFE_WRITE, name);
}

pub(crate) fn tee(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    for path in positionals(args, &[]) {
        check_write(path, cx);
    }
    cx.note(&SAFE_READ, "tee");
}

/// `find`: searching is read-only; `-exec` runs its command (judged too), `-delete` deletes.
pub(crate) fn find(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut acted = false;
    let mut k = 0;
    while let Some(word) = args.get(k) {
        k += 1;
        match &*word.text {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                acted = true;
                cx.note(&FIND_EXEC, &word.text);
                let rest = &args[k..];
                let end = rest
                    .iter()
                    .position(|w| w.text == ";" || w.text == "+")
                    .unwrap_or(rest.len());
                cx.command(&rest[..end], false);
                k += end + 1;
            }
            "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                acted = true;
                cx.note(&FIND_EXEC, &word.text);
            }
            _ => {}
        }
    }
    if !acted {
        cx.note(&SAFE_READ, "find");
    }
}

pub(crate) fn fd(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let exec = args
        .iter()
        .position(|w| matches!(&*w.text, "-x" | "--exec" | "-X" | "--exec-batch"));
    match exec {
        Some(k) => {
            cx.note(&FIND_EXEC, &args[k].text);
            cx.command(&args[k + 1..], false);
        }
        None => cx.note(&SAFE_READ, "fd"),
    }
}

/// `sed`: printing is read-only; `-i` edits files; a script with `w`/`e` writes files or runs
/// commands; a script file cannot be checked.
pub(crate) fn sed(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut positional = false;
    while let Some(text) = args.get(i).map(|w| &*w.text) {
        i += 1;
        if positional || text.len() < 2 || !text.starts_with('-') {
            if scripts.is_empty() {
                scripts.push(text);
            }
            positional = true;
            continue;
        }
        if text == "--" {
            positional = true;
        } else if text == "-e" || text == "--expression" {
            scripts.extend(args.get(i).map(|w| &*w.text));
            i += 1;
        } else if let Some(script) = text.strip_prefix("--expression=") {
            scripts.push(script);
        } else if text.starts_with("--in-place") || is_short_cluster_with(text, 'i') || text == "-I" {
            return cx.note(&EDIT_IN_PLACE, "sed -i");
        } else if text == "-f" || text.starts_with("--file") || is_short_cluster_with(text, 'f') {
            return cx.note(&RUNS_COMMANDS, "sed -f");
        } else if text == "-l" {
            i += 1;
        }
    }
    if scripts.iter().all(|s| sed_script_is_read_only(s)) {
        cx.note(&SAFE_READ, "sed");
    } else {
        cx.note(&RUNS_COMMANDS, "sed");
    }
}

fn is_short_cluster_with(text: &str, flag: char) -> bool {
    !text.starts_with("--") && text.starts_with('-') && text[1..].starts_with(|c: char| c.is_ascii_alphabetic()) && {
        // Options before the flag must be flags without values, e.g. `-ni`, `-Ei.bak`.
        let letters = text[1..].split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
        letters.contains(flag) && letters.chars().take_while(|c| *c != flag).all(|c| "nEsruz".contains(c))
    }
}

/// Walks a sed script command by command; `w`, `W`, `e` and the `s///w`, `s///e` flags write
/// files or run commands. Anything not understood counts as unsafe.
fn sed_script_is_read_only(script: &str) -> bool {
    let b = script.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b';') {
            i += 1;
        }
        if i >= b.len() {
            return true;
        }
        i = sed_skip_address(b, i);
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
                sed_line_end(b, i, cmd)
            }
            b's' | b'y' => match sed_substitution(b, i, cmd) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
}

/// Skips `N`, `$`, `/re/I`, `\%re%`, `first~step` and a `,` second address.
fn sed_skip_address(b: &[u8], mut i: usize) -> usize {
    for part in 0..2 {
        match b.get(i) {
            Some(c) if c.is_ascii_digit() || matches!(c, b'$' | b'~' | b'+') => {
                while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'$' | b'~' | b'+')) {
                    i += 1;
                }
            }
            Some(b'/') | Some(b'\\') => {
                let delim_at = if b[i] == b'\\' { i + 1 } else { i };
                let Some(&delim) = b.get(delim_at) else { return b.len() };
                i = sed_delimited_end(b, delim_at + 1, delim);
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
fn sed_delimited_end(b: &[u8], mut i: usize, delim: u8) -> usize {
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
fn sed_line_end(b: &[u8], mut i: usize, cmd: u8) -> usize {
    let semicolon_ends = matches!(cmd, b'b' | b't' | b'T' | b'v' | b':');
    while i < b.len() && b[i] != b'\n' && !(semicolon_ends && b[i] == b';') {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// `s/re/rep/flags` or `y/abc/xyz/`; `None` when a flag writes a file or runs a command.
fn sed_substitution(b: &[u8], i: usize, cmd: u8) -> Option<usize> {
    let &delim = b.get(i)?;
    let mut i = sed_delimited_end(b, i + 1, delim);
    i = sed_delimited_end(b, i, delim);
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

/// `awk`: a program that runs commands (`system`, pipes), writes files (`>`) or reads the
/// environment needs permission; a program file cannot be checked.
pub(crate) fn awk(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args.iter().any(|w| w.text == "-f" || w.text.starts_with("--file")) {
        return cx.note(&RUNS_COMMANDS, "awk -f");
    }
    let program = args.get(first_positional(args, &["-F", "-v"])).map_or("", |w| &*w.text);
    if program.contains("ENVIRON") {
        return cx.note(&ENV_DUMP, "awk ENVIRON");
    }
    if program.contains("system") || program.contains('|') || awk_writes(program) {
        return cx.note(&RUNS_COMMANDS, "awk");
    }
    cx.note(&SAFE_READ, "awk");
}

/// `print > "file"` or `> var` (but not `$3 > 100` or `>=`).
fn awk_writes(program: &str) -> bool {
    program.match_indices('>').any(|(k, _)| {
        let rest = program[k + 1..].trim_start();
        !rest.starts_with(|c: char| c.is_ascii_digit() || c == '=')
    })
}

/// `sort -o FILE` writes FILE; `--compress-program` runs a program.
pub(crate) fn sort(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    for (k, word) in args.iter().enumerate() {
        let text = &*word.text;
        if text.starts_with("--compress-program") {
            return cx.note(&RUNS_COMMANDS, "sort --compress-program");
        }
        let output = match text {
            "-o" | "--output" => args.get(k + 1).map(|w| &*w.text),
            _ => text.strip_prefix("--output=").or_else(|| text.strip_prefix("-o")),
        };
        if let Some(path) = output.filter(|p| !p.is_empty()) {
            check_write(path, cx);
        }
    }
    cx.note(&SAFE_READ, "sort");
}

/// `uniq IN OUT` writes OUT.
pub(crate) fn uniq(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if let Some(out) = positionals(args, &["-f", "-s", "-w"]).get(1) {
        check_write(out, cx);
    }
    cx.note(&SAFE_READ, "uniq");
}

/// `jq`, `yq`: read-only, unless the filter reads the environment or `-i` edits in place.
pub(crate) fn jq(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args.iter().any(|w| matches!(&*w.text, "-i" | "--inplace" | "--in-place")) {
        return cx.note(&EDIT_IN_PLACE, name);
    }
    let with_value = ["-f", "--from-file", "--indent", "-L", "--arg", "--argjson", "--slurpfile", "--rawfile"];
    let filter = args.get(first_positional(args, &with_value)).map_or("", |w| &*w.text);
    let mentions_env = filter.contains("$ENV")
        || filter.match_indices("env").any(|(k, _)| {
            let before = filter[..k].chars().next_back();
            let after = filter[k + 3..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
            !ident(before) && !ident(after)
        });
    if mentions_env {
        cx.note(&ENV_DUMP, name);
    } else {
        cx.note(&SAFE_READ, name);
    }
}

/// `rg --pre CMD` runs CMD on every file.
pub(crate) fn rg(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args.iter().any(|w| w.text.starts_with("--pre")) {
        cx.note(&RUNS_COMMANDS, "rg --pre");
    } else {
        cx.note(&SAFE_READ, "rg");
    }
}

/// `tar`: listing and creating are fine (the archive is judged as a write); extracting can
/// overwrite anything; some options run programs.
pub(crate) fn tar(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut extract = false;
    let mut create = false;
    let mut archive = None;
    for (k, word) in args.iter().enumerate() {
        let text = &*word.text;
        let cluster = if let Some(long) = text.strip_prefix("--") {
            extract |= long == "extract" || long == "get";
            create |= matches!(long, "create" | "append" | "update");
            if ["to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script"]
                .iter()
                .any(|o| long.starts_with(o))
            {
                return cx.note(&RUNS_COMMANDS, "tar");
            }
            archive = archive.or(long.strip_prefix("file="));
            continue;
        } else if let Some(short) = text.strip_prefix('-') {
            short
        } else if k == 0 {
            text
        } else {
            continue;
        };
        extract |= cluster.contains('x');
        create |= cluster.contains(['c', 'r', 'u', 'A']);
        if cluster.contains('I') {
            return cx.note(&RUNS_COMMANDS, "tar -I");
        }
        if cluster.contains('f') {
            archive = archive.or(args.get(k + 1).map(|w| &*w.text));
        }
    }
    if extract {
        return cx.note(&ARCHIVE_EXTRACT, "tar");
    }
    if let (true, Some(path)) = (create, archive) {
        check_write(path, cx);
    }
    cx.note(if create { &SAFE_WRITE } else { &SAFE_READ }, "tar");
}

/// `zip OUT FILES…`: OUT is a write; `-TT` runs a command.
pub(crate) fn zip(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args.iter().any(|w| w.text == "-TT" || w.text.starts_with("--unzip-command")) {
        return cx.note(&RUNS_COMMANDS, "zip -TT");
    }
    if let Some(out) = args.get(first_positional(args, &["-b", "-n", "-P", "-t", "-tt"])) {
        check_write(&out.text, cx);
    }
    cx.note(&SAFE_WRITE, "zip");
}

/// `unzip -l`, `-t`, `-v`, `-p`, `-c`, `-Z` only read; anything else extracts.
pub(crate) fn unzip(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let reads = args
        .iter()
        .any(|w| matches!(&*w.text, "-l" | "-t" | "-v" | "-p" | "-c" | "-Z" | "-lv" | "-tq"));
    cx.note(if reads { &SAFE_READ } else { &ARCHIVE_EXTRACT }, "unzip");
}

/// `gzip` and friends replace files in place, unless writing to standard output or testing.
pub(crate) fn compress(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let reads = args.iter().any(|w| {
        let t = &*w.text;
        matches!(t, "--stdout" | "--to-stdout" | "--list" | "--test")
            || (t.starts_with('-') && !t.starts_with("--") && t.contains(['c', 'l', 't']))
    });
    cx.note(if reads { &SAFE_READ } else { &FILE_MODIFY }, name);
}

/// `mount`, `hostname`: listing is read-only; with arguments they change the system.
pub(crate) fn admin_query(args: &[&Word<'_>]) -> &'static Rule {
    if args.iter().all(|w| w.text.starts_with('-')) {
        &SAFE_READ
    } else {
        &SYSTEM_CONFIG
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for script in ["1,5p", "s/a/b/g", "/^#/d; s|x|y|2", "$!N;P;D", "y/abc/xyz/", "/start/,/end/{p}", "10q"] {
            assert!(sed_script_is_read_only(script), "{script}");
        }
        for script in ["w out.txt", "s/a/b/w out", "s/x/date/e", "1e rm -rf /", "/x/W log"] {
            assert!(!sed_script_is_read_only(script), "{script}");
        }
    }

    #[test]
    fn awk_output_redirection() {
        assert!(awk_writes("{ print > \"out\" }"));
        assert!(!awk_writes("$3 > 100 { print }"));
        assert!(!awk_writes("$3 >= 1"));
    }
}
