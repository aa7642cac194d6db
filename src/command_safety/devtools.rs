//! Rules for build tools, where cn-run goes beyond Continue: the build, test, lint and format
//! steps a CI agent must run (`cargo test`, `go vet`, `make test`, `mvn verify`, …) are safe.
//! Installing packages, publishing and running arbitrary programs need permission. The
//! JavaScript package managers are in `node_tools`, git in `git`.

use super::args::{assignment, is_dangerous_var};
use super::args::{first_positional, positionals};
use super::catalog::*;
use super::cx::Cx;
use super::tokenize::Word;

/// Script and target names that build, test, lint, type-check or format.
const SAFE_SCRIPTS: &[&str] = &[
    "build",
    "check",
    "compile",
    "cover",
    "coverage",
    "doc",
    "docs",
    "e2e",
    "eslint",
    "fmt",
    "format",
    "lint",
    "prettier",
    "spec",
    "stylelint",
    "test",
    "tests",
    "tsc",
    "type-check",
    "typecheck",
    "types",
    "unit",
    "validate",
    "verify",
    "vet",
];

/// Whether a package script or make target is a build/test/lint step (`test:unit`, `lint-fix`).
pub(crate) fn is_safe_script(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    let stem = base.split(['-', '_']).next().unwrap_or(base);
    [name, base, stem].iter().any(|n| SAFE_SCRIPTS.contains(n))
}

/// The subcommand and its arguments after global options.
pub(crate) fn split_sub<'w, 'a>(
    args: &'w [&'w Word<'a>],
    with_value: &[&str],
) -> (Option<&'w str>, &'w [&'w Word<'a>]) {
    let i = first_positional(args, with_value);
    match args.get(i) {
        Some(word) => (Some(&word.text), &args[i + 1..]),
        None => (None, &args[args.len()..]),
    }
}

pub(crate) fn cargo(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let args = match args.first() {
        Some(w) if w.text.starts_with('+') => &args[1..],
        _ => args,
    };
    if args
        .iter()
        .take_while(|w| w.text != "--")
        .any(|w| w.text.starts_with("--config"))
    {
        return cx.note(&RUNS_COMMANDS, "cargo --config");
    }
    let (sub, rest) = split_sub(args, &["--color", "-Z", "-C", "--config"]);
    let rule = match sub {
        None => &SAFE_READ,
        Some("doc" | "d") if rest.iter().any(|w| w.text == "--open") => &BUILD_OTHER,
        Some("fmt") => &SAFE_WRITE,
        Some(
            "tree" | "metadata" | "version" | "help" | "locate-project" | "verify-project"
            | "pkgid" | "read-manifest",
        ) => &SAFE_READ,
        Some("build" | "b" | "check" | "c" | "test" | "t" | "clippy" | "doc" | "d" | "bench") => {
            &SAFE_BUILD
        }
        Some("nextest") if matches!(rest.first().map(|w| &*w.text), Some("run" | "list")) => {
            &SAFE_BUILD
        }
        Some(
            "install" | "uninstall" | "add" | "remove" | "rm" | "update" | "upgrade" | "fetch"
            | "vendor" | "generate-lockfile",
        ) => &PACKAGE_INSTALL,
        Some("publish" | "login" | "logout" | "owner" | "yank" | "search" | "info") => &NETWORK,
        Some(_) => &BUILD_OTHER,
    };
    cx.note_sub(rule, "cargo", sub.unwrap_or(""));
}

pub(crate) fn go(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args
        .iter()
        .any(|w| w.text.starts_with("-exec") || w.text.starts_with("-toolexec"))
    {
        return cx.note(&RUNS_COMMANDS, "go -exec");
    }
    let (sub, rest) = split_sub(args, &["-C"]);
    let first = rest.first().map(|w| &*w.text);
    let rule = match sub {
        None => &SAFE_READ,
        Some("fmt") => &SAFE_WRITE,
        Some("list" | "version" | "doc" | "help") => &SAFE_READ,
        Some("build" | "test" | "vet") => &SAFE_BUILD,
        Some("env") if !rest.iter().any(|w| matches!(&*w.text, "-w" | "-u")) => &SAFE_READ,
        Some("mod") if matches!(first, Some("verify" | "graph" | "why")) => &SAFE_BUILD,
        Some("mod") if matches!(first, Some("download" | "tidy")) => &PACKAGE_INSTALL,
        Some("get" | "install") => &PACKAGE_INSTALL,
        Some(_) => &BUILD_OTHER,
    };
    cx.note_sub(rule, "go", sub.unwrap_or(""));
}

/// `make [TARGET…] [VAR=value…]`: build/test/lint targets (or the default one) are safe.
pub(crate) fn make(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const WITH_VALUE: &[&str] = &[
        "-C",
        "-f",
        "--file",
        "--makefile",
        "-I",
        "-l",
        "-o",
        "-W",
        "--directory",
    ];
    const RUNS: &[&str] = &[
        "-f",
        "--file",
        "--makefile",
        "-C",
        "--directory",
        "-I",
        "--include-dir",
        "--eval",
        "-E",
        "--load",
    ];
    if let Some(option) = args.iter().find(|w| {
        RUNS.iter()
            .any(|p| w.text.starts_with(p) && !w.text.starts_with("--no-"))
    }) {
        return cx.note_sub(&RUNS_COMMANDS, "make", &option.text);
    }
    let mut targets_safe = true;
    let mut first_other = "";
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = &*word.text;
        i += 1;
        if text.starts_with('-') {
            let takes_number = text == "-j"
                && args
                    .get(i)
                    .is_some_and(|w| w.text.bytes().all(|c| c.is_ascii_digit()));
            if WITH_VALUE.contains(&text) || takes_number {
                i += 1;
            }
        } else if let Some(var) = assignment(word) {
            if is_dangerous_var(var) {
                cx.note(&ENV_DANGEROUS, var);
            }
        } else if !is_safe_script(text) && text != "all" {
            targets_safe = false;
            if first_other.is_empty() {
                first_other = text;
            }
        }
    }
    if targets_safe {
        cx.note(&SAFE_BUILD, "make");
    } else {
        cx.note_sub(&BUILD_OTHER, "make", first_other);
    }
}

/// `cc`, `gcc`, `clang`, …: compiling is a build step; options that run another program
/// (`-wrapper`, `-B DIR` for the assembler and linker, `-fuse-ld`), load a plugin (`-fplugin`,
/// `-Xclang -load`) or read options from a file (`-specs`, `@FILE`) need permission.
pub(crate) fn compiler(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const RUNS: &[&str] = &[
        "-wrapper",
        "-B",
        "--prefix",
        "-fplugin",
        "-fpass-plugin",
        "-fuse-ld",
        "--ld-path",
        "-specs",
        "--specs",
        "-Xclang",
        "-plugin",
        "--plugin",
        "-Wl,-plugin",
        "-Wl,--plugin",
        "-no-integrated-as",
        "@",
    ];
    match args
        .iter()
        .find(|w| RUNS.iter().any(|p| w.text.starts_with(p)))
    {
        Some(option) => cx.note_sub(&RUNS_COMMANDS, name, &option.text),
        None => cx.note(&SAFE_BUILD, name),
    }
}

/// `rustc`: a build step, unless it is given a linker, a codegen backend or link arguments
/// (programs it runs), or reads its options from a file (`@FILE`).
pub(crate) fn rustc(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const RUNS: &[&str] = &[
        "linker",
        "link-arg",
        "codegen-backend",
        "llvm-args",
        "llvm-plugins",
        "@",
    ];
    let runs = |text: &str| {
        let text = text
            .strip_prefix("-C")
            .or_else(|| text.strip_prefix("-Z"))
            .or_else(|| text.strip_prefix("--codegen="))
            .unwrap_or(text);
        RUNS.iter().any(|p| text.starts_with(p))
    };
    match args.iter().find(|w| runs(&w.text)) {
        Some(option) => cx.note_sub(&RUNS_COMMANDS, "rustc", &option.text),
        None => cx.note(&SAFE_BUILD, "rustc"),
    }
}

/// `pytest` options that load a plugin (`-p`), or read a config or `conftest.py` files from a
/// chosen place (`-c`, `--rootdir`, `--confcutdir`, `-o addopts=…`), which may hold code.
pub(crate) fn pytest(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const LOADS: &[&str] = &[
        "-p",
        "-c",
        "-o",
        "--rootdir",
        "--confcutdir",
        "--config-file",
        "--override-ini",
    ];
    let loads = |text: &str| {
        LOADS.iter().any(|o| {
            let short = o.len() == 2 && text.starts_with(o);
            short || text == *o || text.strip_prefix(o).is_some_and(|r| r.starts_with('='))
        })
    };
    // Tests outside the workspace bring their own `conftest.py` and plugins.
    let outside =
        |w: &&&Word<'_>| !w.text.starts_with('-') && super::paths::leaves_workspace(&w.text);
    match args
        .iter()
        .find(|w| loads(&w.text))
        .or_else(|| args.iter().find(outside))
    {
        Some(option) => cx.note_sub(&RUNS_COMMANDS, "pytest", &option.text),
        None => cx.note(&SAFE_BUILD, "pytest"),
    }
}

/// `man` with a pager or browser the command names (`-P`, `--pager`, `-H`, `--html`) runs it.
pub(crate) fn man(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let runs = |t: &str| t.starts_with("-P") || t.starts_with("-H") || t.starts_with("--pager");
    match args
        .iter()
        .find(|w| runs(&w.text) || w.text.starts_with("--html"))
    {
        Some(option) => cx.note_sub(&RUNS_COMMANDS, "man", &option.text),
        None => cx.note(&SAFE_READ, "man"),
    }
}

/// Gradle tasks and Maven phases that compile, test or check.
pub(crate) fn gradle(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const TASKS: &[&str] = &[
        "assemble",
        "build",
        "check",
        "classes",
        "compileJava",
        "compileKotlin",
        "compileTestJava",
        "detekt",
        "jar",
        "javadoc",
        "ktlintCheck",
        "lint",
        "spotlessCheck",
        "test",
        "testClasses",
    ];
    if args
        .iter()
        .any(|w| matches!(&*w.text, "-I" | "--init-script"))
    {
        return cx.note(&RUNS_COMMANDS, "gradle --init-script");
    }
    let tasks = positionals(args, &["-x", "--exclude-task", "-p", "--project-dir"]);
    let task_name = |t: &&str| t.rsplit(':').next().unwrap_or(t).to_owned();
    match tasks
        .iter()
        .find(|t| !TASKS.contains(&task_name(t).as_str()))
    {
        Some(other) => cx.note(&BUILD_OTHER, other),
        None => cx.note(&SAFE_BUILD, "gradle"),
    }
}

pub(crate) fn maven(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const PHASES: &[&str] = &[
        "checkstyle:check",
        "compile",
        "package",
        "spotless:check",
        "test",
        "test-compile",
        "validate",
        "verify",
    ];
    let goals = positionals(
        args,
        &[
            "-pl",
            "-f",
            "-P",
            "-T",
            "-s",
            "-gs",
            "-rf",
            "--projects",
            "--file",
        ],
    );
    match goals.iter().find(|g| !PHASES.contains(g)) {
        Some(other) => cx.note(&BUILD_OTHER, other),
        None => cx.note(&SAFE_BUILD, "mvn"),
    }
}

/// `pip list|show|freeze|check` only read; everything else changes packages.
pub(crate) fn pip(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let (sub, _) = split_sub(args, &[]);
    let rule = match sub {
        None | Some("list" | "show" | "freeze" | "check" | "help") => &SAFE_READ,
        Some("download" | "search" | "index") => &NETWORK,
        Some(_) if args.iter().any(|w| matches!(&*w.text, "--version" | "-V")) => &SAFE_READ,
        Some(_) => &PACKAGE_INSTALL,
    };
    cx.note_sub(rule, "pip", sub.unwrap_or(""));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_names() {
        for name in [
            "test",
            "test:unit",
            "lint-fix",
            "build:prod",
            "format:check",
            "type-check",
            "typecheck",
        ] {
            assert!(is_safe_script(name), "{name}");
        }
        for name in [
            "preinstall",
            "postinstall",
            "deploy",
            "start",
            "release",
            "dev",
            "install",
        ] {
            assert!(!is_safe_script(name), "{name}");
        }
    }
}
