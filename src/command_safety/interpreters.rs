//! Rules for programs that run other code: shells and language interpreters (a script file,
//! inline code, or code from a pipe or here-document, which is evaluated too), wrappers that run
//! the command after them (`env`, `nice`, `timeout`, `xargs`, …), and the shell builtins that
//! change the environment or reveal it (`export`, `unset`, `set`, `printenv`, `history`, `trap`).

use super::args::first_positional;
use super::args::{assignment, is_dangerous_var};
use super::catalog::*;
use super::cx::Cx;
use super::devtools;
use super::tokenize::Word;

/// Options that make an interpreter run the next argument as code.
const INLINE_FLAGS: &[&str] = &[
    "-c",
    "-e",
    "-E",
    "-p",
    "-r",
    "--eval",
    "--print",
    "--command",
];
/// Options that only print a version or help.
const INFO_FLAGS: &[&str] = &["--version", "-V", "-v", "--help", "-h"];
/// Python modules that are test runners, linters or formatters.
const PYTHON_TOOLS: &[&str] = &[
    "black",
    "compileall",
    "flake8",
    "isort",
    "mypy",
    "py_compile",
    "pylint",
    "pytest",
    "ruff",
    "unittest",
];

/// Code from standard input: a pipe, a here-document (evaluated as shell code), or a terminal.
fn stdin_code(name: &str, shell: bool, cx: &mut Cx<'_>) {
    if cx.after_pipe {
        return cx.note(&PIPE_TO_SHELL, name);
    }
    cx.note(&STDIN_CODE, name);
    if let (true, Some(body)) = (shell, cx.stdin) {
        cx.text(body);
    }
}

/// `sh`, `bash`, …: `-c STRING` is evaluated as shell code; a file runs a script.
pub(crate) fn shell(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut i = 0;
    let mut reads_stdin = false;
    while let Some(text) = args.get(i).map(|w| &*w.text) {
        if text == "--" || text == "-" {
            i += 1;
            reads_stdin |= text == "-";
            break;
        }
        if text.len() < 2 || !text.starts_with(['-', '+']) {
            break;
        }
        if args.len() == 1 && matches!(text, "--version" | "--help") && !cx.after_pipe {
            return cx.note(&SAFE_READ, name);
        }
        let short = !text.starts_with("--");
        if short && text.starts_with('-') && text.contains('c') {
            cx.note(&INLINE, name);
            if let Some(code) = args.get(i + 1) {
                cx.text(&code.text);
            }
            return;
        }
        reads_stdin |= short && text.contains('s');
        i += if matches!(text, "-o" | "+o" | "-O" | "+O") {
            2
        } else {
            1
        };
    }
    if reads_stdin || i >= args.len() {
        stdin_code(name, true, cx);
    } else {
        cx.note(&SCRIPT, name);
    }
}

/// `python`, `node`, `ruby`, …: inline code, a module (test runners and linters are safe), a
/// script file, or code from standard input.
pub(crate) fn lang(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let quiet = !cx.after_pipe && cx.stdin.is_none();
    if args.len() == 1 && INFO_FLAGS.contains(&&*args[0].text) && quiet {
        return cx.note(&SAFE_READ, name);
    }
    for (i, word) in args.iter().enumerate() {
        let text = &*word.text;
        if text == "-m" && name.starts_with("py") {
            return python_module(
                args.get(i + 1).map(|w| &*w.text),
                &args[(i + 2).min(args.len())..],
                cx,
            );
        }
        let cluster = text.len() > 2 && text.starts_with('-') && text.is_char_boundary(2);
        if INLINE_FLAGS.contains(&text) || (cluster && INLINE_FLAGS.contains(&&text[..2])) {
            return cx.note(&INLINE, name);
        }
        if text == "-" || text == "--" {
            break;
        }
        if !text.starts_with('-') {
            return cx.note(&SCRIPT, name);
        }
    }
    stdin_code(name, false, cx);
}

fn python_module(module: Option<&str>, rest: &[&Word<'_>], cx: &mut Cx<'_>) {
    if module.is_some_and(|m| super::loaders::loads_elsewhere(m, rest, cx)) {
        return;
    }
    match module {
        Some("pip") => devtools::pip(rest, cx),
        Some("pytest") => devtools::pytest(rest, cx),
        Some(m) if PYTHON_TOOLS.contains(&m) => cx.note(&SAFE_BUILD, m),
        Some(m) => cx.note(&SCRIPT, m),
        None => cx.note(&SCRIPT, "python -m"),
    }
}

/// `cmd`, `powershell`, …: another shell language, so inline code is not evaluated further.
pub(crate) fn win_shell(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let encoded = args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.len() > 3
            && (t.starts_with("-enc") || t.starts_with("-e") && "-encodedcommand".starts_with(&t))
    });
    if encoded {
        cx.note(&OBF_BASE64, name);
    }
    let inline = args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        matches!(t.as_str(), "/c" | "/k" | "/r" | "-c" | "-command" | "-e")
    });
    if inline {
        cx.note(&INLINE, name);
    } else if args.is_empty() {
        stdin_code(name, false, cx);
    } else {
        cx.note(&SCRIPT, name);
    }
}

/// `nice`, `timeout`, `command`, `watch`, …: judged by the command they run.
pub(crate) fn wrapper(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let with_value: &[&str] = match name {
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u"],
        "stdbuf" => &["-i", "-o", "-e"],
        "watch" => &["-n", "--interval"],
        _ => &[],
    };
    if name == "command" && args.iter().any(|w| matches!(&*w.text, "-v" | "-V")) {
        return cx.note(&SAFE_READ, "command -v");
    }
    let mut start = first_positional(args, with_value);
    if name == "timeout" && start < args.len() {
        start += 1;
    }
    let inner = &args[start.min(args.len())..];
    match inner {
        [] => cx.note(&SAFE_READ, name),
        [only] if name == "watch" => cx.text(&only.text),
        _ => {
            let after_pipe = cx.after_pipe;
            cx.command(inner, after_pipe);
        }
    }
}

/// `xargs CMD`: runs CMD with arguments read from the input; with no CMD it echoes them.
/// CMD is judged as `CMD ARGS $(input)`: the input is a word known only when it runs, so
/// `… | xargs rm -rf` is `rm -rf $(…)` (whose target may be `~` or `/`).
pub(crate) fn xargs(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const WITH_VALUE: &[&str] = &["-n", "-I", "-P", "-L", "-d", "-s", "-E", "-a", "--max-args"];
    let inner = &args[first_positional(args, WITH_VALUE).min(args.len())..];
    if inner.is_empty() {
        cx.note(&SAFE_READ, "xargs");
        return;
    }
    let input = Word {
        text: std::borrow::Cow::Borrowed("$(xargs input)"),
        flags: crate::command_safety::tokenize::SUBST,
        plain_len: 0,
    };
    let mut words = inner.to_vec();
    words.push(&input);
    cx.command(&words, false);
}

/// `env [NAME=value…] [CMD]`: sets variables for CMD; alone, it prints the environment.
pub(crate) fn env(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if let Some(k) = args
        .iter()
        .position(|w| matches!(&*w.text, "-S" | "--split-string"))
    {
        cx.note(&INLINE, "env -S");
        if let Some(code) = args.get(k + 1) {
            cx.text(&code.text);
        }
        return;
    }
    let mut i = first_positional(args, &["-u", "--unset", "-C", "--chdir"]);
    while let Some(name) = args.get(i).and_then(|w| assignment(w)) {
        if is_dangerous_var(name) {
            cx.note(&ENV_DANGEROUS, name);
        }
        i += 1;
    }
    match args.get(i..) {
        Some(inner) if !inner.is_empty() => {
            // `env -C DIR CMD` runs CMD in DIR, as `cd DIR && CMD` would.
            let saved = (cx.cd_depth, cx.in_git);
            if let Some(dir) = env_chdir(&args[..i]) {
                cx.in_git |= super::paths::names_git_dir(dir) || dir.contains('$');
                match super::paths::descend(dir, cx.cd_depth) {
                    Some(depth) => cx.cd_depth = depth,
                    None => cx.note(&CD_OUTSIDE, dir),
                }
            }
            let after_pipe = cx.after_pipe;
            cx.command(inner, after_pipe);
            (cx.cd_depth, cx.in_git) = saved;
        }
        _ => cx.note(&ENV_DUMP, "env"),
    }
}

/// The folder of `env -C DIR` / `-CDIR` / `--chdir DIR` / `--chdir=DIR`, among env's options.
fn env_chdir<'a>(options: &'a [&Word<'_>]) -> Option<&'a str> {
    options.iter().enumerate().find_map(|(k, w)| {
        let next = || options.get(k + 1).map(|n| &*n.text);
        match &*w.text {
            "-C" | "--chdir" => next(),
            text => text
                .strip_prefix("--chdir=")
                .or_else(|| text.strip_prefix("-C").filter(|d| !d.is_empty())),
        }
    })
}

/// `printenv [NAME…]`: all of the environment, or the named variables.
pub(crate) fn printenv(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let names = &args[first_positional(args, &[]).min(args.len())..];
    if names.is_empty() {
        return cx.note(&ENV_DUMP, "printenv");
    }
    match names
        .iter()
        .find(|w| super::secrets::is_secret_var(&w.text))
    {
        Some(secret) => cx.note(&SECRET_VAR, &secret.text),
        None => cx.note(&SAFE_READ, "printenv"),
    }
}

/// `export`, `declare`, `readonly`, `local`, `typeset`: safe unless the variable controls which
/// code runs, or nothing is named (then the variables are printed).
pub(crate) fn export(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let named: Vec<&&Word<'_>> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
    if named.is_empty() && name != "local" {
        return cx.note(&ENV_DUMP, name);
    }
    if args.iter().any(|w| w.text == "-f") {
        return cx.note(&FUNCTION, name);
    }
    for word in named {
        let var = assignment(word).unwrap_or(&word.text);
        if is_dangerous_var(var) {
            return cx.note(&ENV_DANGEROUS, var);
        }
    }
    cx.note(&SAFE_SHELL, name);
}

pub(crate) fn unset(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    match args.iter().find(|w| super::args::controls_code(&w.text)) {
        Some(var) => cx.note(&ENV_DANGEROUS, &var.text),
        None => cx.note(&SAFE_SHELL, "unset"),
    }
}

/// `set -euo pipefail` is harmless; `set` alone prints every variable; `set +o history` hides
/// what follows.
pub(crate) fn set(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args.is_empty() {
        cx.note(&ENV_DUMP, "set");
    } else if args.iter().any(|w| w.text == "history") {
        cx.note(&HISTORY, "set +o history");
    } else {
        cx.note(&SAFE_SHELL, "set");
    }
}

pub(crate) fn history(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let lists = args
        .iter()
        .all(|w| w.text.bytes().all(|c| c.is_ascii_digit()));
    cx.note(if lists { &SAFE_READ } else { &HISTORY }, "history");
}

/// `trap CODE SIGNAL…`: the code runs later, so it is evaluated now.
pub(crate) fn trap(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    match args.first().map(|w| &*w.text) {
        None | Some("-l" | "-p" | "-" | "") => cx.note(&SAFE_SHELL, "trap"),
        Some(code) => {
            cx.note(&INLINE, "trap");
            cx.text(code);
        }
    }
}
