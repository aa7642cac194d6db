//! Rules for developer tools, where cn-run goes beyond Continue: the build, test, lint and
//! format steps a CI agent must run (`cargo test`, `go vet`, `npm run lint`, `pytest`,
//! `make test`, …) are safe, and so are git's read-only commands. Installing packages, publishing,
//! running arbitrary programs or scripts, and git commands that change the repository or reach a
//! remote need permission.

use super::catalog::*;
use super::rules::{first_positional, positionals};
use super::simple::{assignment, check_write, is_dangerous_var};
use super::tokenize::Word;
use super::walk::Cx;

/// Script and target names that build, test, lint, type-check or format.
const SAFE_SCRIPTS: &[&str] = &[
    "build", "check", "compile", "cover", "coverage", "doc", "docs", "e2e", "eslint", "fmt",
    "format", "lint", "prettier", "spec", "stylelint", "test", "tests", "tsc", "type-check",
    "typecheck", "types", "unit", "validate", "verify", "vet",
];

/// Whether a package script or make target is a build/test/lint step (`test:unit`, `lint-fix`).
fn is_safe_script(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    let stem = base.split(['-', '_']).next().unwrap_or(base);
    [name, base, stem].iter().any(|n| SAFE_SCRIPTS.contains(n))
}

fn script(tool: &str, name: Option<&str>, cx: &mut Cx<'_>) {
    match name {
        None => cx.note(&SAFE_READ, tool),
        Some(n) if is_safe_script(n) => cx.note_sub(&SAFE_BUILD, tool, n),
        Some(n) => cx.note_sub(&BUILD_OTHER, tool, n),
    }
}

/// The subcommand and its arguments after global options.
fn split_sub<'w, 'a>(args: &'w [&'w Word<'a>], with_value: &[&str]) -> (Option<&'w str>, &'w [&'w Word<'a>]) {
    let i = first_positional(args, with_value);
    match args.get(i) {
        Some(word) => (Some(&word.text), &args[i + 1..]),
        None => (None, &args[args.len()..]),
    }
}

pub(crate) fn git(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut i = 0;
    while let Some(text) = args.get(i).map(|w| &*w.text) {
        if text == "-c" || text.starts_with("--exec-path") || text.starts_with("--config-env") {
            return cx.note(&RUNS_COMMANDS, "git -c");
        }
        if !text.starts_with('-') {
            break;
        }
        i += if matches!(text, "-C" | "--git-dir" | "--work-tree" | "--namespace") { 2 } else { 1 };
    }
    let Some(sub) = args.get(i).map(|w| &*w.text) else {
        return cx.note(&SAFE_GIT, "git");
    };
    let rest = &args[i + 1..];
    for (k, word) in rest.iter().enumerate() {
        match word.text.strip_prefix("--output") {
            Some("") => check_write(rest.get(k + 1).map_or("", |w| &*w.text), cx),
            Some(value) => check_write(value.trim_start_matches('='), cx),
            None => {}
        }
    }
    cx.note_sub(git_rule(sub, rest), "git", sub);
}

fn git_rule(sub: &str, rest: &[&Word<'_>]) -> &'static Rule {
    let first = rest.first().map(|w| &*w.text);
    let has = |flags: &[&str]| rest.iter().any(|w| flags.contains(&&*w.text));
    let named = positionals(rest, &[]).len();
    let read = |yes: bool| if yes { &SAFE_GIT } else { &GIT_MODIFY };
    match sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "rev-list" | "ls-files" | "ls-tree"
        | "blame" | "annotate" | "describe" | "shortlog" | "grep" | "cat-file" | "merge-base"
        | "name-rev" | "whatchanged" | "version" | "help" | "for-each-ref" | "show-ref"
        | "check-ignore" | "check-attr" | "count-objects" | "diff-tree" | "diff-files"
        | "diff-index" | "show-branch" | "cherry" | "range-diff" | "var" | "--version"
        | "--help" => &SAFE_GIT,
        "branch" => read(
            !has(&["-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"])
                && (named == 0 || has(&["-l", "--list", "--contains", "--merged", "--no-merged", "--points-at"])),
        ),
        "tag" => read(
            !has(&["-d", "--delete", "-a", "-s", "-m", "-f", "-u", "--annotate", "--sign", "--force"])
                && (named == 0 || has(&["-l", "--list", "--contains", "--points-at", "-n"])),
        ),
        "config" => read(
            has(&["--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin"])
                || (named == 1 && !has(&["--unset", "--unset-all", "--add", "--replace-all", "-e", "--edit", "--remove-section", "--rename-section"])),
        ),
        "remote" => match first {
            None | Some("-v" | "--verbose" | "get-url") => &SAFE_GIT,
            Some("show" | "update" | "prune") => &GIT_NETWORK,
            Some(_) => &GIT_MODIFY,
        },
        "stash" => read(matches!(first, Some("list" | "show"))),
        "worktree" => read(first == Some("list")),
        "reflog" => read(matches!(first, None | Some("show"))),
        "notes" => read(matches!(first, None | Some("list" | "show"))),
        "submodule" => match first {
            None | Some("status" | "summary") => &SAFE_GIT,
            Some(_) => &GIT_NETWORK,
        },
        "push" | "pull" | "fetch" | "clone" | "ls-remote" | "send-email" | "request-pull"
        | "svn" | "p4" => &GIT_NETWORK,
        _ => &GIT_MODIFY,
    }
}

pub(crate) fn cargo(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let args = match args.first() {
        Some(w) if w.text.starts_with('+') => &args[1..],
        _ => args,
    };
    if args.iter().take_while(|w| w.text != "--").any(|w| w.text.starts_with("--config")) {
        return cx.note(&RUNS_COMMANDS, "cargo --config");
    }
    let (sub, rest) = split_sub(args, &["--color", "-Z", "-C", "--config"]);
    let rule = match sub {
        None => &SAFE_READ,
        Some("doc" | "d") if rest.iter().any(|w| w.text == "--open") => &BUILD_OTHER,
        Some(
            "build" | "b" | "check" | "c" | "test" | "t" | "clippy" | "fmt" | "doc" | "d" | "bench"
            | "tree" | "metadata" | "version" | "help" | "locate-project" | "verify-project"
            | "pkgid" | "read-manifest",
        ) => &SAFE_BUILD,
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
    if args.iter().any(|w| w.text.starts_with("-exec") || w.text.starts_with("-toolexec")) {
        return cx.note(&RUNS_COMMANDS, "go -exec");
    }
    let (sub, rest) = split_sub(args, &["-C"]);
    let first = rest.first().map(|w| &*w.text);
    let rule = match sub {
        None => &SAFE_READ,
        Some("build" | "test" | "vet" | "fmt" | "list" | "version" | "doc" | "help") => &SAFE_BUILD,
        Some("env") if !rest.iter().any(|w| matches!(&*w.text, "-w" | "-u")) => &SAFE_READ,
        Some("mod") if matches!(first, Some("verify" | "graph" | "why")) => &SAFE_BUILD,
        Some("mod") if matches!(first, Some("download" | "tidy")) => &PACKAGE_INSTALL,
        Some("get" | "install") => &PACKAGE_INSTALL,
        Some(_) => &BUILD_OTHER,
    };
    cx.note_sub(rule, "go", sub.unwrap_or(""));
}

/// Sub-commands shared by npm, pnpm and yarn, or `None` when the tool decides.
fn package_common(sub: &str) -> Option<&'static Rule> {
    Some(match sub {
        "test" | "t" | "tst" => &SAFE_BUILD,
        "ls" | "list" | "ll" | "why" | "explain" | "help" | "-v" | "--version" | "-h"
        | "--help" | "root" | "bin" => &SAFE_READ,
        "install" | "i" | "in" | "add" | "ci" | "clean-install" | "install-test" | "it"
        | "update" | "up" | "upgrade" | "uninstall" | "un" | "unlink" | "remove" | "rm"
        | "link" | "ln" | "rebuild" | "rb" | "dedupe" | "ddp" | "prune" | "import" | "fetch"
        | "global" => &PACKAGE_INSTALL,
        "exec" | "x" | "dlx" | "create" | "init" => &PACKAGE_EXEC,
        "publish" | "unpublish" | "login" | "adduser" | "logout" | "owner" | "access"
        | "deprecate" | "dist-tag" | "token" | "view" | "info" | "show" | "search"
        | "outdated" | "audit" | "ping" | "whoami" => &NETWORK,
        _ => return None,
    })
}

fn first_name<'w>(rest: &'w [&Word<'_>]) -> Option<&'w str> {
    rest.get(first_positional(rest, &[])).map(|w| &*w.text)
}

pub(crate) fn npm(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let (sub, rest) = split_sub(args, &["--prefix", "-w", "--workspace", "--loglevel"]);
    match sub {
        None => cx.note(&SAFE_READ, "npm"),
        Some("run" | "run-script" | "rum" | "urn") => script("npm run", first_name(rest), cx),
        Some(s) => cx.note_sub(package_common(s).unwrap_or(&BUILD_OTHER), "npm", s),
    }
}

pub(crate) fn pnpm(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let (sub, rest) = split_sub(args, &["-C", "--dir", "--filter", "-F"]);
    match sub {
        None => cx.note(&SAFE_READ, "pnpm"),
        Some("run" | "run-script") => script("pnpm run", first_name(rest), cx),
        Some(s) => match package_common(s) {
            Some(rule) => cx.note_sub(rule, "pnpm", s),
            None => script("pnpm", Some(s), cx),
        },
    }
}

pub(crate) fn yarn(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let (sub, rest) = split_sub(args, &["--cwd"]);
    match sub {
        None => cx.note(&PACKAGE_INSTALL, "yarn"),
        Some("run") => script("yarn run", first_name(rest), cx),
        Some("workspace") if rest.len() > 1 => yarn(&rest[1..], cx),
        Some(s) => match package_common(s) {
            Some(rule) => cx.note_sub(rule, "yarn", s),
            None => script("yarn", Some(s), cx),
        },
    }
}

pub(crate) fn bun(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let (sub, rest) = split_sub(args, &[]);
    let is_file = |s: &str| s.contains(['.', '/']);
    match sub {
        None => cx.note(&SAFE_READ, "bun"),
        Some("build") => cx.note(&SAFE_BUILD, "bun build"),
        Some("run") => match first_name(rest) {
            Some(file) if is_file(file) => cx.note(&SCRIPT, file),
            name => script("bun run", name, cx),
        },
        Some(file) if is_file(file) => cx.note(&SCRIPT, file),
        Some(s) => match package_common(s) {
            Some(rule) => cx.note_sub(rule, "bun", s),
            None => script("bun", Some(s), cx),
        },
    }
}

/// `make [TARGET…] [VAR=value…]`: build/test/lint targets (or the default one) are safe.
pub(crate) fn make(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const WITH_VALUE: &[&str] = &["-C", "-f", "--file", "--makefile", "-I", "-l", "-o", "-W", "--directory"];
    let mut targets_safe = true;
    let mut first_other = "";
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = &*word.text;
        i += 1;
        if text.starts_with('-') {
            let takes_number = text == "-j" && args.get(i).is_some_and(|w| w.text.bytes().all(|c| c.is_ascii_digit()));
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

/// Gradle tasks and Maven phases that compile, test or check.
pub(crate) fn gradle(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const TASKS: &[&str] = &[
        "assemble", "build", "check", "classes", "compileJava", "compileKotlin", "compileTestJava",
        "detekt", "jar", "javadoc", "ktlintCheck", "lint", "spotlessCheck", "test", "testClasses",
    ];
    if args.iter().any(|w| matches!(&*w.text, "-I" | "--init-script")) {
        return cx.note(&RUNS_COMMANDS, "gradle --init-script");
    }
    let tasks = positionals(args, &["-x", "--exclude-task", "-p", "--project-dir"]);
    let task_name = |t: &&str| t.rsplit(':').next().unwrap_or(t).to_owned();
    match tasks.iter().find(|t| !TASKS.contains(&task_name(t).as_str())) {
        Some(other) => cx.note(&BUILD_OTHER, other),
        None => cx.note(&SAFE_BUILD, "gradle"),
    }
}

pub(crate) fn maven(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    const PHASES: &[&str] = &[
        "checkstyle:check", "compile", "package", "spotless:check", "test", "test-compile",
        "validate", "verify",
    ];
    let goals = positionals(args, &["-pl", "-f", "-P", "-T", "-s", "-gs", "-rf", "--projects", "--file"]);
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
        for name in ["test", "test:unit", "lint-fix", "build:prod", "format:check", "type-check", "typecheck"] {
            assert!(is_safe_script(name), "{name}");
        }
        for name in ["preinstall", "postinstall", "deploy", "start", "release", "dev", "install"] {
            assert!(!is_safe_script(name), "{name}");
        }
    }
}
