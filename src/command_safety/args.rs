//! Helpers the program rules share for reading a command's arguments: where the positional
//! arguments start, which they are, and what a `NAME=value` word sets. They live apart from the
//! dispatcher (`rules.rs`) so the rule modules it dispatches to do not depend on it.

use super::tokenize::Word;

/// Variables that cannot change which code runs: setting them needs no permission. Every other
/// variable does (`GIT_EXTERNAL_DIFF`, `MAKEFLAGS`, `CC`, `LESSOPEN`, `npm_config_*`, …): the
/// class of variables that run programs or load plugins is open-ended, so it is default-deny.
const HARMLESS_VARS: &[&str] = &[
    "CARGO_INCREMENTAL",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CGO_ENABLED",
    "CI",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLORTERM",
    "COLUMNS",
    "DEBIAN_FRONTEND",
    "FORCE_COLOR",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_TERMINAL_PROMPT",
    "GOARCH",
    "GOOS",
    "LANG",
    "LANGUAGE",
    "LINES",
    "LOG_LEVEL",
    "NODE_ENV",
    "NO_COLOR",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONUNBUFFERED",
    "PY_COLORS",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_TEST_THREADS",
    "TERM",
    "TZ",
    "VERBOSE",
];

/// Variables that decide which code runs; setting or unsetting them needs permission.
const DANGEROUS_VARS: &[&str] = &[
    "BASH_ENV",
    "CDPATH",
    "ENV",
    "GIT_CONFIG_GLOBAL",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "HISTFILE",
    "HOME",
    "IFS",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "NODE_OPTIONS",
    "PATH",
    "PERL5LIB",
    "PERL5OPT",
    "PROMPT_COMMAND",
    "PS4",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "RUBYOPT",
    "RUSTC_WRAPPER",
    "SHELL",
    "SHELLOPTS",
];

/// Setting this variable needs permission: it is not on the harmless list.
pub(crate) fn is_dangerous_var(name: &str) -> bool {
    !(HARMLESS_VARS.contains(&name) || name.starts_with("LC_"))
}

/// Unsetting this variable changes which code runs.
pub(crate) fn controls_code(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name) || name.starts_with("DYLD_")
}

/// The variable name of a `NAME=value` (or `NAME+=value`) word.
pub(crate) fn assignment<'w>(word: &'w Word<'_>) -> Option<&'w str> {
    let eq = word.text.find('=')?;
    let name = word.text[..eq]
        .strip_suffix('+')
        .unwrap_or(&word.text[..eq]);
    let valid = !name.is_empty()
        && eq < word.plain_len
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    valid.then_some(name)
}

/// Index of the first positional argument: options are skipped (with the values of those in
/// `with_value`), and `--` ends them.
pub(crate) fn first_positional(args: &[&Word<'_>], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = &*word.text;
        if text == "--" {
            return i + 1;
        }
        if text.len() < 2 || !text.starts_with('-') {
            return i;
        }
        i += if with_value.contains(&text) { 2 } else { 1 };
    }
    args.len()
}

/// All positional arguments, in order (see [`first_positional`]).
pub(crate) fn positionals<'w>(args: &'w [&Word<'_>], with_value: &'w [&str]) -> Vec<&'w str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(word) = args.get(i) {
        let text = &*word.text;
        i += 1;
        if options_done || text.len() < 2 || !text.starts_with('-') {
            out.push(text);
        } else if text == "--" {
            options_done = true;
        } else if with_value.contains(&text) {
            i += 1;
        }
    }
    out
}
