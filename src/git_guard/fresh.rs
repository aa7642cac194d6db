//! Git folders that appeared in the work tree during the run (a repository made, cloned or
//! moved in): there is no start to put back, so what in them would run a program or send
//! git elsewhere is taken out instead, before the workflow's next git command there.
//!
//! - a `.git` that is a symbolic link, or a `gitdir:`/`commondir` that leads out of the work
//!   tree, is moved aside (`.git.cn-run-disabled`): the folder it names is not the run's to
//!   change, and no git command in the work tree should follow it;
//! - otherwise, in the git folder: every hook but git's own `*.sample` files is removed,
//!   `config` and `config.worktree` keep only keys that run nothing and point nowhere
//!   ([`SAFE_KEYS`]: the repository's format, remotes' URLs and refspecs, branches'
//!   upstreams, the author), and the object alternates go.
//!
//! Each change is said. A clone's own files (`*.sample` hooks, its remote and branch) stay.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::nofollow;

/// Config keys a fresh repository keeps (`section.key`, or `section.*.key` for any
/// subsection): none of them runs a program, includes a file or moves the work tree.
const SAFE_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "extensions.preciousobjects",
    "extensions.partialclone",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.promisor",
    "remote.*.partialclonefilter",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "submodule.*.url",
    "submodule.*.active",
    "submodule.*.path",
];

/// Objects borrowed from elsewhere.
const ALTERNATES: &[&str] = &["objects/info/alternates", "objects/info/http-alternates"];

/// Where a `.git` that leads elsewhere is moved.
const ASIDE: &str = ".git.cn-run-disabled";

/// Take out of the fresh `.git` at `dot_git` (resolved to `gitdirs`) what would act later;
/// `tree` is the work tree. What was done, or why it could not be.
pub(super) fn neutralise(
    dot_git: &Path,
    gitdirs: &[PathBuf],
    tree: &Path,
) -> Vec<Result<String, String>> {
    let is_link = dot_git
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if is_link || gitdirs.iter().any(|d| !d.starts_with(tree)) {
        return vec![move_aside(dot_git).map(|aside| {
            format!(
                "{} (made during the run) led out of the work tree or was a link; moved \
                 aside to {}.",
                dot_git.display(),
                aside.display()
            )
        })];
    }
    gitdirs.iter().flat_map(|d| clean(d)).collect()
}

/// Move the `.git` at `dot_git` to [`ASIDE`] beside it (a number added if that is taken);
/// where it went.
pub(super) fn move_aside(dot_git: &Path) -> Result<PathBuf, String> {
    let shown = dot_git.display();
    let parent = dot_git.parent().unwrap_or(Path::new("/"));
    let fd = nofollow::open_dir_abs(parent, false).map_err(|e| format!("{shown}: {e}"))?;
    let name = dot_git.file_name().unwrap_or(OsStr::new(".git"));
    let mut aside = ASIDE.to_owned();
    for n in 1..100 {
        if matches!(nofollow::kind_of(&fd, OsStr::new(&aside)), Ok(None)) {
            break;
        }
        aside = format!("{ASIDE}.{n}");
    }
    nofollow::rename_in(&fd, name, OsStr::new(&aside)).map_err(|e| format!("{shown}: {e}"))?;
    Ok(parent.join(aside))
}

/// The hooks, config and alternates of the fresh git folder `gitdir`.
fn clean(gitdir: &Path) -> Vec<Result<String, String>> {
    let fd = match nofollow::open_dir_abs(gitdir, false) {
        Ok(fd) => fd,
        Err(e) => return vec![Err(format!("{}: {e}", gitdir.display()))],
    };
    let mut said = Vec::new();
    let mut removed = |rel: &str, r: std::io::Result<()>| {
        let shown = gitdir.join(rel).display().to_string();
        said.push(
            r.map(|()| format!("{shown} (made during the run) was taken out."))
                .map_err(|e| format!("{shown}: {e}")),
        );
    };
    if let Ok(hooks) = nofollow::open_dir_under(&fd, Path::new("hooks"), false) {
        for (name, _) in nofollow::entries(&hooks).unwrap_or_default() {
            if !name.to_string_lossy().ends_with(".sample") {
                let rel = format!("hooks/{}", name.to_string_lossy());
                removed(&rel, nofollow::remove_tree_in(&hooks, &name));
            }
        }
    }
    for rel in ALTERNATES {
        let path = Path::new(rel);
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        if let Ok(dir) = nofollow::open_dir_under(&fd, parent, false)
            && matches!(nofollow::kind_of(&dir, name), Ok(Some(_)))
        {
            removed(rel, nofollow::remove_tree_in(&dir, name));
        }
    }
    for name in ["config", "config.worktree"] {
        if let Some(r) = clean_config(&fd, gitdir, name) {
            said.push(r);
        }
    }
    said
}

/// Rewrite the config file `name` of `gitdir` with only its [`SAFE_KEYS`]; `None` when
/// there is none or it keeps everything.
fn clean_config(
    fd: &std::os::fd::OwnedFd,
    gitdir: &Path,
    name: &str,
) -> Option<Result<String, String>> {
    let shown = gitdir.join(name).display().to_string();
    let name_os = OsStr::new(name);
    nofollow::open_file(fd, name_os, false).ok()?;
    let entries = match entries_of(&gitdir.join(name)) {
        Ok(e) => e,
        Err(e) => return Some(Err(format!("{shown}: {e}"))),
    };
    let kept: Vec<&(String, String)> = entries.iter().filter(|(k, _)| safe(k)).collect();
    if kept.len() == entries.len() {
        return None;
    }
    let dropped: Vec<&str> = entries
        .iter()
        .filter(|(k, _)| !safe(k))
        .map(|(k, _)| k.as_str())
        .collect();
    let written = nofollow::replace_file(fd, name_os, render(&kept).as_bytes(), Some(0o644));
    Some(
        written
            .map(|()| {
                format!(
                    "{shown} (made during the run): took out {}.",
                    dropped.join(", ")
                )
            })
            .map_err(|e| format!("{shown}: {e}")),
    )
}

/// The (key, value) pairs of the config file at `path`.
fn entries_of(path: &Path) -> Result<Vec<(String, String)>, String> {
    let mut config = git2::Config::new().map_err(|e| e.to_string())?;
    config
        .add_file(path, git2::ConfigLevel::Local, true)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut entries = config.entries(None).map_err(|e| e.to_string())?;
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| e.to_string())?;
        let (Ok(k), v) = (entry.name(), entry.value().unwrap_or("")) else {
            continue;
        };
        out.push((k.to_owned(), v.to_owned()));
    }
    Ok(out)
}

/// Whether `key` (`section[.sub].name`, as git2 spells it) is one of [`SAFE_KEYS`].
fn safe(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let (Some(first), Some(last)) = (lower.split('.').next(), lower.rsplit('.').next()) else {
        return false;
    };
    let has_sub = lower.matches('.').count() >= 2;
    let shape = match has_sub {
        true => format!("{first}.*.{last}"),
        false => lower.clone(),
    };
    SAFE_KEYS.contains(&shape.as_str())
}

/// Config text for `entries`, each in its own section block (git reads repeated sections).
fn render(entries: &[&(String, String)]) -> String {
    let mut out = String::new();
    for (key, value) in entries {
        let (Some(dot), Some(last)) = (key.find('.'), key.rfind('.')) else {
            continue;
        };
        let section = &key[..dot];
        let header = match dot == last {
            true => format!("[{section}]"),
            false => format!("[{section} \"{}\"]", quote(&key[dot + 1..last])),
        };
        out.push_str(&format!(
            "{header}\n\t{} = \"{}\"\n",
            &key[last + 1..],
            quote(value)
        ));
    }
    out
}

/// A value or subsection inside double quotes.
fn quote(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keys_that_run_nothing_are_kept() {
        for k in [
            "core.bare",
            "remote.origin.url",
            "remote.a.b.fetch",
            "branch.main.merge",
        ] {
            assert!(safe(k), "{k}");
        }
        for k in [
            "core.fsmonitor",
            "core.hooksPath",
            "core.worktree",
            "core.sshCommand",
            "include.path",
            "includeIf.gitdir:/x.path",
            "filter.evil.clean",
            "diff.external",
            "remote.origin.uploadpack",
            "alias.st",
            "core.pager",
        ] {
            assert!(!safe(k), "{k}");
        }
    }

    #[test]
    fn a_cleaned_config_reads_back_with_the_kept_values() {
        let text = b"[core]\n\tbare = false\n\tfsmonitor = touch /tmp/x\n\
                     [remote \"o\\\"r\"]\n\turl = https://h/x \\\"y\\\"\n\
                     [include]\n\tpath = /etc/evil\n";
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, text).unwrap();
        let all = entries_of(&a).unwrap();
        let kept: Vec<&(String, String)> = all.iter().filter(|(k, _)| safe(k)).collect();
        std::fs::write(&b, render(&kept)).unwrap();
        let back = entries_of(&b).unwrap();
        assert_eq!(
            back,
            vec![
                ("core.bare".to_owned(), "false".to_owned()),
                ("remote.o\"r.url".to_owned(), "https://h/x \"y\"".to_owned()),
            ]
        );
    }
}
