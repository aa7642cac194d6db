//! Rules for the everyday file and text tools whose safety depends on their options: `find`
//! (`-exec`, `-delete`), `awk` (`system`, output redirection), `sort -o`, `uniq IN OUT`,
//! `jq`/`yq` (`env`, `-i`), `rg --pre`, `tee`, `cd`, `mkdir`/`touch`, `date -s`. `sed` and the
//! archivers have files of their own.

use super::args::{first_positional, positionals};
use super::catalog::*;
use super::cx::Cx;
use super::cx::check_write;
use super::paths;
use super::tokenize::Word;

/// `cd DIR`: fine inside the workspace; leaving it (or going home) needs permission. Earlier
/// `cd`s in the same command count: `cd web && npm test && cd ..` stays inside.
pub(crate) fn cd(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if name == "popd" {
        cx.cd_depth = 0;
        return cx.note(&SAFE_SHELL, name);
    }
    let word = args.get(first_positional(args, &[]));
    let dir = match word.map(|w| &*w.text) {
        None | Some("-") => None,
        Some(dir) => Some(dir),
    };
    if !cx.detached && word.is_some_and(|w| w.hidden() || paths::names_git_dir(&w.text)) {
        cx.in_git = true;
    }
    match dir.and_then(|d| paths::descend(d, cx.cd_depth)) {
        Some(depth) => {
            if !cx.detached {
                cx.cd_depth = depth;
                cx.acc.moved |= depth != 0;
            }
            cx.note(&SAFE_SHELL, name);
        }
        None => cx.note(&CD_OUTSIDE, dir.unwrap_or(name)),
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

/// `find`: searching is read-only; `-exec` runs its command (judged too), `-delete` deletes
/// (from the root or home directory it is refused like `rm -rf /`).
pub(crate) fn find(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let from_root = args
        .iter()
        .take_while(|w| !w.text.starts_with(['-', '(', '!']))
        .any(|w| {
            paths::only_expansions(&w.text)
                || paths::is_root_level(&paths::without_expansions(&w.text))
        });
    let mut acted = false;
    let mut deletes = false;
    let mut k = 0;
    while let Some(word) = args.get(k) {
        k += 1;
        deletes |= word.text == "-delete";
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
    if deletes && from_root {
        cx.note(&RM_ROOT, "find -delete");
    } else if !acted {
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

/// `awk`: a program that runs commands (`system`, pipes), writes files (`>`) or reads the
/// environment needs permission; a program file cannot be checked.
pub(crate) fn awk(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args
        .iter()
        .any(|w| w.text == "-f" || w.text.starts_with("--file"))
    {
        return cx.note(&RUNS_COMMANDS, "awk -f");
    }
    let program = args
        .get(first_positional(args, &["-F", "-v"]))
        .map_or("", |w| &*w.text);
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
            _ => text
                .strip_prefix("--output=")
                .or_else(|| text.strip_prefix("-o")),
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
    if args
        .iter()
        .any(|w| matches!(&*w.text, "-i" | "--inplace" | "--in-place"))
    {
        return cx.note(&EDIT_IN_PLACE, name);
    }
    let with_value = [
        "-f",
        "--from-file",
        "--indent",
        "-L",
        "--arg",
        "--argjson",
        "--slurpfile",
        "--rawfile",
    ];
    let filter = args
        .get(first_positional(args, &with_value))
        .map_or("", |w| &*w.text);
    let mentions_env = filter.contains("$ENV")
        || filter.match_indices("env").any(|(k, _)| {
            let before = filter[..k].chars().next_back();
            let after = filter[k + 3..].chars().next();
            let ident = |c: Option<char>| {
                c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            };
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
    if let Some(option) = args
        .iter()
        .find(|w| w.text.starts_with("--pre") || w.text.starts_with("--hostname-bin"))
    {
        cx.note_sub(&RUNS_COMMANDS, "rg", &option.text);
    } else {
        cx.note(&SAFE_READ, "rg");
    }
}

/// `less`, `more`: reading, unless a `+` start-up command is given (`+!cmd` runs a shell
/// command, `+|` pipes to one) or a log or key file is named (`-o`, `-O`, `-k`).
pub(crate) fn pager(args: &[&Word<'_>]) -> &'static Rule {
    let risky = args.iter().any(|w| {
        let t = &*w.text;
        t.starts_with('+')
            || t.starts_with("-o")
            || t.starts_with("-O")
            || t.starts_with("-k")
            || t.starts_with("--log-file")
            || t.starts_with("--LOG-FILE")
            || t.starts_with("--lesskey-file")
    });
    if risky { &RUNS_COMMANDS } else { &SAFE_READ }
}

/// `date` prints the time; `-s`/`--set` changes the system clock.
pub(crate) fn date(args: &[&Word<'_>]) -> &'static Rule {
    let sets = args.iter().any(|w| {
        let t = &*w.text;
        t.starts_with("--set") || (t.starts_with('-') && !t.starts_with("--") && t.contains('s'))
    });
    if sets { &SYSTEM_CONFIG } else { &SAFE_READ }
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
    fn awk_output_redirection() {
        assert!(awk_writes("{ print > \"out\" }"));
        assert!(!awk_writes("$3 > 100 { print }"));
        assert!(!awk_writes("$3 >= 1"));
    }
}
