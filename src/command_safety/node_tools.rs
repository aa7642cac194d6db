//! Rules for the JavaScript package managers (npm, pnpm, yarn, bun): running the test, build,
//! lint or format scripts is safe (one of cn-run's additions to Continue); installing, executing
//! downloaded packages, publishing and other scripts (`preinstall`, `deploy`, `start`) need
//! permission.

use super::args::first_positional;
use super::catalog::*;
use super::cx::Cx;
use super::devtools::{is_safe_script, split_sub};
use super::tokenize::Word;

fn script(tool: &str, name: Option<&str>, cx: &mut Cx<'_>) {
    match name {
        None => cx.note(&SAFE_READ, tool),
        Some(n) if is_safe_script(n) => cx.note_sub(&SAFE_BUILD, tool, n),
        Some(n) => cx.note_sub(&BUILD_OTHER, tool, n),
    }
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
        | "deprecate" | "dist-tag" | "token" | "view" | "info" | "show" | "search" | "outdated"
        | "audit" | "ping" | "whoami" => &NETWORK,
        _ => return None,
    })
}

/// Options that make a package manager run another program, load code or read a config (or a
/// whole project) from a place the command chooses.
const RUNS: &[&str] = &[
    "--script-shell",
    "--node-options",
    "--userconfig",
    "--globalconfig",
    "--prefix",
    "--cwd",
    "--dir",
    "-C",
    "--shell-emulator",
    "--require",
    "--preload",
    "--config",
];

/// Of those, the ones that only choose a directory: allowed inside the workspace.
const DIRS: &[&str] = &["--prefix", "--cwd", "--dir", "-C"];

/// Notes the first program-running option of `tool`, if any; true when there was one.
fn runs_program(tool: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) -> bool {
    let found = args.iter().enumerate().find_map(|(k, w)| {
        // `--config.KEY=VALUE` (pnpm) sets any config key.
        let option = RUNS.iter().find(|p| {
            w.text == **p
                || w.text
                    .strip_prefix(**p)
                    .is_some_and(|r| r.starts_with(['=', '.']))
        })?;
        let value = match w.text.split_once('=') {
            Some((_, v)) => v,
            None => args.get(k + 1).map_or("", |v| &*v.text),
        };
        let inside = !value.contains('$') && !super::paths::leaves_workspace(value);
        (!(DIRS.contains(option) && inside)).then_some(w)
    });
    if let Some(option) = found {
        cx.note_sub(&RUNS_COMMANDS, tool, &option.text);
    }
    found.is_some()
}

fn first_name<'w>(rest: &'w [&Word<'_>]) -> Option<&'w str> {
    rest.get(first_positional(rest, &[])).map(|w| &*w.text)
}

pub(crate) fn npm(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if runs_program("npm", args, cx) {
        return;
    }
    let (sub, rest) = split_sub(args, &["--prefix", "-w", "--workspace", "--loglevel"]);
    match sub {
        None => cx.note(&SAFE_READ, "npm"),
        Some("run" | "run-script" | "rum" | "urn") => script("npm run", first_name(rest), cx),
        Some(s) => cx.note_sub(package_common(s).unwrap_or(&BUILD_OTHER), "npm", s),
    }
}

pub(crate) fn pnpm(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if runs_program("pnpm", args, cx) {
        return;
    }
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
    if runs_program("yarn", args, cx) {
        return;
    }
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
    if runs_program("bun", args, cx) {
        return;
    }
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
