//! Options that make a build, test or lint tool load code from a place the command names: a
//! plugin, a required module or an init script (always), or a config file, build file or
//! project directory outside the workspace (its code is not the repository's). Each is
//! checked in every spelling the tool accepts (`--config FILE`, `--config=FILE`, `-cFILE`),
//! because an option that asks in one spelling and passes in another is a bypass.

use super::catalog::LOADS_ELSEWHERE;
use super::cx::Cx;
use super::paths;
use super::tokenize::Word;

/// When an option needs permission.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    /// Whatever its value: it loads or runs code the command chooses.
    Always,
    /// When its value lies outside the workspace (or is only known when the shell runs it).
    Outside,
}
use When::{Always, Outside};

/// Per program: the options that load code or read a config, and when that needs permission.
const LOADERS: &[(&str, &[(&str, When)])] = &[
    ("awk", AWK),
    (
        "cargo",
        &[
            ("--manifest-path", Outside),
            ("--target-dir", Outside),
            ("-C", Outside),
        ],
    ),
    (
        "eslint",
        &[
            ("-c", Outside),
            ("--config", Outside),
            ("--rulesdir", Outside),
            ("--resolve-plugins-relative-to", Outside),
        ],
    ),
    (
        "flake8",
        &[("--config", Outside), ("--append-config", Outside)],
    ),
    ("gawk", AWK),
    (
        "go",
        &[
            ("-vettool", Always),
            ("--vettool", Always),
            ("--exec", Always),
            ("--toolexec", Always),
            ("-overlay", Outside),
            ("--overlay", Outside),
            ("-modfile", Outside),
            ("--modfile", Outside),
        ],
    ),
    ("gradle", GRADLE),
    ("gradlew", GRADLE),
    (
        "jest",
        &[
            ("-c", Outside),
            ("--config", Outside),
            ("--setupFiles", Outside),
            ("--setupFilesAfterEnv", Outside),
            ("--globalSetup", Outside),
            ("--globalTeardown", Outside),
            ("--testRunner", Outside),
            ("--rootDir", Outside),
            ("--roots", Outside),
            ("--resolver", Outside),
            ("--transform", Outside),
        ],
    ),
    ("mawk", AWK),
    (
        "mocha",
        &[
            ("-r", Outside),
            ("--require", Outside),
            ("--config", Outside),
            ("--file", Outside),
        ],
    ),
    (
        "mvn",
        &[
            ("-f", Outside),
            ("--file", Outside),
            ("-s", Outside),
            ("--settings", Outside),
            ("-gs", Outside),
            ("--global-settings", Outside),
            ("-t", Outside),
            ("--toolchains", Outside),
        ],
    ),
    ("mypy", &[("--config-file", Outside)]),
    ("nawk", AWK),
    (
        "prettier",
        &[
            ("--plugin", Outside),
            ("--config", Outside),
            ("--plugin-search-dir", Outside),
        ],
    ),
    (
        "pylint",
        &[
            ("--load-plugins", Always),
            ("--init-hook", Always),
            ("--rcfile", Outside),
        ],
    ),
    ("tar", &[("-F", Always)]),
    ("tsc", &[("-p", Outside), ("--project", Outside)]),
    (
        "vitest",
        &[
            ("-c", Outside),
            ("--config", Outside),
            ("--root", Outside),
            ("-r", Outside),
            ("--dir", Outside),
        ],
    ),
];

const AWK: &[(&str, When)] = &[
    ("-l", Always),
    ("--load", Always),
    ("-f", Outside),
    ("--file", Outside),
    ("-i", Outside),
    ("--include", Outside),
];
const GRADLE: &[(&str, When)] = &[
    ("-I", Always),
    ("--init-script", Always),
    ("-b", Outside),
    ("--build-file", Outside),
    ("-c", Outside),
    ("--settings-file", Outside),
    ("-p", Outside),
    ("--project-dir", Outside),
    ("-g", Outside),
    ("--gradle-user-home", Outside),
];

/// Notes the first option of `name` that loads code from elsewhere; says whether there was one.
pub(crate) fn loads_elsewhere(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) -> bool {
    let Some((_, options)) = LOADERS.iter().find(|(program, _)| *program == name) else {
        return false;
    };
    let end = args
        .iter()
        .position(|w| w.text == "--")
        .unwrap_or(args.len());
    for (k, word) in args[..end].iter().enumerate() {
        for &(option, when) in *options {
            let Some(value) = value_of(&word.text, option, args.get(k + 1).copied()) else {
                continue;
            };
            if when == Always || elsewhere(value, cx.cd_depth) {
                cx.acc.note_parts(&LOADS_ELSEWHERE, &[name, option]);
                return true;
            }
        }
    }
    false
}

/// The value `word` gives `option`: the next word (`-c FILE`), after `=` (`--config=FILE`,
/// `-vettool=X`) or, for a one-letter option, attached (`-cFILE`). The next word is passed
/// as a word so that a value only known at run time counts as one.
fn value_of<'w, 'a>(
    word: &'w str,
    option: &str,
    next: Option<&'w Word<'a>>,
) -> Option<Value<'w, 'a>> {
    if word == option {
        return Some(next.map_or(Value::Missing, Value::Word));
    }
    let rest = word.strip_prefix(option)?;
    if let Some(value) = rest.strip_prefix('=') {
        return Some(Value::Text(value));
    }
    (option.len() == 2 && !rest.is_empty()).then_some(Value::Text(rest))
}

#[derive(Clone, Copy)]
enum Value<'w, 'a> {
    Word(&'w Word<'a>),
    Text(&'w str),
    Missing,
}

/// Whether a value names a place outside the workspace (from the current `cd` depth), or
/// one only known when the shell runs the command.
fn elsewhere(value: Value<'_, '_>, cd_depth: i32) -> bool {
    let text = match value {
        Value::Missing => return false,
        Value::Word(word) if word.hidden() => return true,
        Value::Word(word) => &*word.text,
        Value::Text(text) => text,
    };
    text.contains('$') || text.contains('`') || paths::descend(text, cd_depth).is_none()
}
