//! The unit tests' one way to run git on a scratch repository: a fixed author, no
//! system or user configuration (so no autocrlf, hooks or filters of the machine's), and
//! a failure that names the command.

use std::path::Path;
use std::process::Command;

/// Runs `git args` in `dir` and gives its stdout; panics with the output if it fails.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Makes `dir` a repository whose one commit, `start`, holds everything in it.
pub(crate) fn commit_all(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "start"]);
}

/// Writes `files` (path, text) under `dir`, folders made as needed, and commits them
/// (with anything else already there) as `start`.
pub(crate) fn commit_files(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(dir);
}
