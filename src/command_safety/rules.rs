//! Judging one program with its arguments: found in the table ([`super::programs`]) by its
//! name ([`super::program_name`]), it goes to its rule or its handler; a program not listed
//! needs permission (and is disabled when its arguments are a disabled command).

use super::archives;
use super::catalog::*;
use super::cx::Cx;
use super::destructive;
use super::devtools;
use super::git;
use super::interpreters;
use super::loaders;
use super::node_tools;
use super::obfuscation;
use super::program_name::{ProgramName, lookup};
use super::programs::Kind::{self, *};
use super::sed;
use super::text_tools;
use super::tokenize::Word;

/// Judges a program (not hidden in an expansion) with its arguments.
pub(crate) fn classify(program: &Word<'_>, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let Some(name) = ProgramName::parse(&program.text) else {
        return unknown(program, args, cx);
    };
    if name.by_path {
        cx.note(&EXEC_BY_PATH, &program.text);
    }
    match lookup(name.as_str()) {
        Some(kind) => dispatch(kind, name.as_str(), args, cx),
        None => unknown(program, args, cx),
    }
}

/// An unknown program needs permission; if its arguments, from a known program on, are a
/// disabled command (`chrt -r 1 rm -rf /`, `firejail rm -rf ~`), it may well run them as a
/// wrapper does, and is disabled too: a wrapper cn-run does not know is no way around a
/// disabled command.
fn unknown(program: &Word<'_>, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    cx.note(&UNKNOWN, &program.text);
    let known = |w: &Word<'_>| {
        !w.text.starts_with('-')
            && ProgramName::parse(&w.text).is_some_and(|n| lookup(n.as_str()).is_some())
    };
    let tries = if cx.acc.probing { 1 } else { 16 };
    let mut starts = (0..args.len()).filter(|&k| known(args[k])).take(tries);
    if starts.any(|k| cx.would_be_disabled(&args[k..])) {
        cx.note(&UNKNOWN_WRAPS_DISABLED, &program.text);
    }
}

fn dispatch(kind: Kind, name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if loaders::loads_elsewhere(name, args, cx) {
        return;
    }
    let rule = match kind {
        Fixed(rule) if cx.after_pipe && rule.id == NETWORK.id => &PIPE_TO_NETWORK,
        Fixed(rule) => rule,
        Rm => destructive::rm(args),
        Mv => destructive::mv(args),
        Shred => destructive::shred(args),
        Truncate => destructive::truncate(args),
        Exec if args.is_empty() => &SAFE_SHELL,
        Exec => &EVAL,
        Date => text_tools::date(args),
        Chmod => destructive::chmod(args),
        Chown => destructive::chown(args),
        Dd => destructive::dd(args),
        WindowsDelete => destructive::windows_delete(args),
        Cipher => destructive::cipher(args),
        Echo => return obfuscation::echo(args, cx),
        Base64 => return obfuscation::base64(args, cx),
        Xxd => return obfuscation::xxd(args, cx),
        Shell => return interpreters::shell(name, args, cx),
        Lang => return interpreters::lang(name, args, cx),
        WinShell => return interpreters::win_shell(name, args, cx),
        Wrapper => return interpreters::wrapper(name, args, cx),
        Xargs => return interpreters::xargs(args, cx),
        Env => return interpreters::env(args, cx),
        Printenv => return interpreters::printenv(args, cx),
        Export => return interpreters::export(name, args, cx),
        Unset => return interpreters::unset(args, cx),
        Set => return interpreters::set(args, cx),
        History => return interpreters::history(args, cx),
        Trap => return interpreters::trap(args, cx),
        Cd => return text_tools::cd(name, args, cx),
        Create => return text_tools::create(name, args, cx),
        Tee => return text_tools::tee(args, cx),
        Find => return text_tools::find(args, cx),
        Fd => return text_tools::fd(args, cx),
        Sed => return sed::sed(args, cx),
        Awk => return text_tools::awk(args, cx),
        Sort => return text_tools::sort(args, cx),
        Uniq => return text_tools::uniq(args, cx),
        Jq => return text_tools::jq(name, args, cx),
        Rg => return text_tools::rg(args, cx),
        Tar => return archives::tar(args, cx),
        Zip => return archives::zip(args, cx),
        Unzip => return archives::unzip(args, cx),
        Compress => return archives::compress(name, args, cx),
        Mount | Hostname => text_tools::admin_query(args),
        Git => return git::git(args, cx),
        Cargo => return devtools::cargo(args, cx),
        Go => return devtools::go(args, cx),
        Npm => return node_tools::npm(args, cx),
        Pnpm => return node_tools::pnpm(args, cx),
        Yarn => return node_tools::yarn(args, cx),
        Bun => return node_tools::bun(args, cx),
        Make => return devtools::make(args, cx),
        Gradle => return devtools::gradle(args, cx),
        Maven => return devtools::maven(args, cx),
        Pip => return devtools::pip(args, cx),
        Compiler => return devtools::compiler(name, args, cx),
        Rustc => return devtools::rustc(args, cx),
        Pytest => return devtools::pytest(args, cx),
        Man => return devtools::man(args, cx),
        Pager => text_tools::pager(args),
    };
    cx.note(rule, name);
}
