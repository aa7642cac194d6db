//! Rules for `git`: the commands that only read the repository are safe; those that change it
//! (commits, branches, config, the work tree) or reach a remote need permission, and so do the
//! global options that make git run arbitrary commands (`-c`, `--exec-path`).

use super::args::positionals;
use super::catalog::*;
use super::cx::Cx;
use super::cx::check_write;
use super::tokenize::Word;

/// Sub-commands that never change the repository.
const READ_ONLY: &[&str] = &[
    "--help",
    "--version",
    "annotate",
    "blame",
    "cat-file",
    "check-attr",
    "check-ignore",
    "cherry",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "for-each-ref",
    "grep",
    "help",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "name-rev",
    "range-diff",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "status",
    "var",
    "version",
    "whatchanged",
];

/// Sub-commands that talk to a remote.
const NETWORK_SUBS: &[&str] = &[
    "clone",
    "fetch",
    "ls-remote",
    "p4",
    "pull",
    "push",
    "request-pull",
    "send-email",
    "svn",
];

/// `git branch` options that create, delete, rename or configure branches.
const BRANCH_CHANGES: &[&str] = &[
    "-d",
    "-D",
    "--delete",
    "-m",
    "-M",
    "--move",
    "-c",
    "-C",
    "--copy",
    "-f",
    "--force",
    "-u",
    "--set-upstream-to",
    "--unset-upstream",
    "--edit-description",
];
/// `git tag` options that create or delete tags.
const TAG_CHANGES: &[&str] = &[
    "-d",
    "--delete",
    "-a",
    "-s",
    "-m",
    "-f",
    "-u",
    "--annotate",
    "--sign",
    "--force",
];
/// Options with which `git branch NAME` / `git tag NAME` only list.
const LIST_FILTERS: &[&str] = &[
    "-l",
    "--list",
    "--contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "-n",
];
/// `git config` options that only read.
const CONFIG_READS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--list",
    "-l",
    "--show-origin",
];
/// `git config` options that write.
const CONFIG_WRITES: &[&str] = &[
    "--unset",
    "--unset-all",
    "--add",
    "--replace-all",
    "-e",
    "--edit",
    "--remove-section",
    "--rename-section",
];

pub(crate) fn git(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    // After `cd sub` (or `pushd sub`) git runs in `sub` as `git -C sub` would: it may be a
    // nested repository the model made, whose `.git/config` git would obey.
    if cx.cd_depth > 0 {
        return cx.note(&GIT_LOCATION, "git after cd");
    }
    let mut i = 0;
    while let Some(text) = args.get(i).map(|w| &*w.text) {
        if text == "-c" || text.starts_with("--exec-path") || text.starts_with("--config-env") {
            return cx.note(&RUNS_COMMANDS, "git -c");
        }
        if text.starts_with("--git-dir") || text.starts_with("--work-tree") {
            return cx.note(&GIT_LOCATION, text);
        }
        if text == "-C" {
            // Any directory but the workspace root may be a nested repository the model made,
            // whose `.git/config` (pager, fsmonitor, hooks) git would run.
            let dir = args.get(i + 1).map_or("", |w| &*w.text);
            if !matches!(dir.trim_end_matches('/'), "." | "") || dir.is_empty() {
                return cx.note(&GIT_LOCATION, "git -C");
            }
        }
        if !text.starts_with('-') {
            break;
        }
        let takes_value = matches!(text, "-C" | "--namespace");
        i += if takes_value { 2 } else { 1 };
    }
    let Some(sub) = args.get(i).map(|w| &*w.text) else {
        return cx.note(&SAFE_GIT, "git");
    };
    let rest = &args[i + 1..];
    if let Some(option) = rest.iter().find(|w| runs_program(sub, &w.text)) {
        return cx.note_sub(&RUNS_COMMANDS, "git", &option.text);
    }
    for (k, word) in rest.iter().enumerate() {
        match word.text.strip_prefix("--output") {
            Some("") => check_write(rest.get(k + 1).map_or("", |w| &*w.text), cx),
            Some(value) => check_write(value.trim_start_matches('='), cx),
            None => {}
        }
    }
    cx.note_sub(rule(sub, rest), "git", sub);
}

/// Sub-command options that run a program the command names, or one from the config or the
/// environment that a read-only command would not run (`--ext-diff`, `grep -O`).
fn runs_program(sub: &str, option: &str) -> bool {
    let named = |prefixes: &[&str]| prefixes.iter().any(|p| option.starts_with(p));
    match sub {
        "grep" => option.starts_with("-O") || named(&["--open-files-in-pager"]),
        _ => named(&[
            "--ext-diff",
            "--textconv",
            "--upload-pack",
            "--receive-pack",
            "--exec=",
            "--exec",
            "--filters",
        ]),
    }
}

fn rule(sub: &str, rest: &[&Word<'_>]) -> &'static Rule {
    let first = rest.first().map(|w| &*w.text);
    let has = |flags: &[&str]| rest.iter().any(|w| flags.contains(&&*w.text));
    let named = positionals(rest, &[]).len();
    let read = |yes: bool| if yes { &SAFE_GIT } else { &GIT_MODIFY };
    match sub {
        _ if READ_ONLY.contains(&sub) => &SAFE_GIT,
        _ if NETWORK_SUBS.contains(&sub) => &GIT_NETWORK,
        "branch" => read(!has(BRANCH_CHANGES) && (named == 0 || has(LIST_FILTERS))),
        "tag" => read(!has(TAG_CHANGES) && (named == 0 || has(LIST_FILTERS))),
        "config" => read(has(CONFIG_READS) || (named == 1 && !has(CONFIG_WRITES))),
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
        _ => &GIT_MODIFY,
    }
}
