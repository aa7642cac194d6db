//! Git checkpoints, the run's patch and rollback, checked against real repositories built
//! with the `git` CLI: snapshots land under `refs/cn-run/`, HEAD, the index, branches and
//! stash never move, `git apply` of the patch on the start state gives the final tree, and
//! rollback gives back the start (or checkpoint 1) byte for byte.
#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use cn_run::checkpoint::{
    CheckpointError, Checkpointer, GitCheckpointer, Unavailable, list_runs, rollback,
};

use crate::support::runner::git;

fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn set_exec(root: &Path, rel: &str, exec: bool) {
    let path = root.join(rel);
    let mode = if exec { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A file as a user sees it: content and executable bit, or a symlink target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>, bool),
    Link(PathBuf),
}

/// Every file and symlink under `root` (not `.git`), minus paths starting with `skip`.
fn tree(root: &Path, skip: &[&str]) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        for item in fs::read_dir(dir).unwrap() {
            let path = item.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            if rel == ".git" {
                continue;
            } else if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let exec = meta.permissions().mode() & 0o100 != 0;
                out.insert(rel, Entry::File(fs::read(&path).unwrap(), exec));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out.retain(|rel, _| !skip.iter().any(|s| rel.starts_with(s)));
    out
}

/// Everything the user's git state consists of, to compare before and after.
#[derive(Debug, PartialEq, Eq)]
struct GitState {
    head: String,
    branch: String,
    branches: String,
    index: Vec<u8>,
    staged: String,
    stash: String,
}

fn git_state(root: &Path) -> GitState {
    GitState {
        head: git(root, &["rev-parse", "HEAD"]),
        branch: git(root, &["symbolic-ref", "HEAD"]),
        branches: git(root, &["for-each-ref", "refs/heads", "refs/tags"]),
        index: fs::read(root.join(".git/index")).unwrap(),
        staged: git(root, &["diff", "--cached", "--name-status"]),
        stash: git(root, &["stash", "list"]),
    }
}

/// A committed repository with text, binary, executable, symlinked and ignored files,
/// plus an untracked file and a run output folder that exist before the run starts.
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    git(root, &["init", "-q"]);
    write(root, "README.md", b"# demo\n\nline two\nline three\n");
    write(root, "src/lib.rs", b"pub fn one() -> u32 {\n    1\n}\n");
    write(root, "old.txt", b"to be deleted\n");
    write(root, "run.sh", b"#!/bin/sh\necho hi\n");
    write(root, "logo.bin", &[0u8, 159, 146, 150, 1, 2, 3, 0, 255]);
    write(root, ".gitignore", b"*.log\n/secret.env\n");
    symlink("README.md", root.join("readme-link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial"]);
    write(root, "build.log", b"ignored at start\n");
    write(root, "secret.env", b"TOKEN=abc\n");
    write(root, "notes.txt", b"untracked before the run\n");
    write(root, ".cn-run/out/events.jsonl", b"{}\n");
    tmp
}

fn start(root: &Path, run: &str) -> GitCheckpointer {
    let exclude = [PathBuf::from(".cn-run/out")];
    GitCheckpointer::start(root, run, &exclude)
        .unwrap()
        .unwrap()
}

/// The run's edits after checkpoint 1: a new file in a new folder, a deletion, an
/// executable bit, a binary change, a new symlink, plus an ignored and an excluded file.
fn second_round_of_edits(root: &Path) {
    write(root, "src/deep/new/mod.rs", b"pub mod added;\n");
    fs::remove_file(root.join("old.txt")).unwrap();
    set_exec(root, "run.sh", true);
    write(root, "logo.bin", &[0u8, 1, 2, 3, 4, 5, 0, 0, 7]);
    symlink("src/lib.rs", root.join("lib-link")).unwrap();
    write(root, "build.log", b"written by the run\n");
    write(root, ".cn-run/out/events.jsonl", b"{}\n{}\n");
}

/// Which `refs/cn-run` references exist, by name.
fn cn_refs(root: &Path) -> Vec<String> {
    let refs = git(
        root,
        &["for-each-ref", "--format=%(refname)", "refs/cn-run"],
    );
    refs.lines().map(str::to_string).collect()
}

/// A fresh clone of `root` with `reference` checked out (detached).
fn checkout_of(root: &Path, reference: &str) -> tempfile::TempDir {
    let fresh = tempfile::tempdir().unwrap();
    let dst = fresh.path().to_str().unwrap();
    git(root, &["clone", "-q", "--no-checkout", ".", dst]);
    git(fresh.path(), &["fetch", "-q", "origin", reference]);
    git(fresh.path(), &["checkout", "-q", "--detach", "FETCH_HEAD"]);
    fresh
}

const NOT_SNAPSHOTTED: &[&str] = &["build.log", "secret.env", ".cn-run"];

#[test]
fn checkpoints_are_hidden_refs_and_the_patch_rebuilds_the_final_tree() {
    let repo = fixture();
    let root = repo.path();
    // The user has a staged change; it must stay staged, and the start snapshot has it.
    write(root, "src/lib.rs", b"pub fn one() -> u32 {\n    2 - 1\n}\n");
    git(root, &["add", "src/lib.rs"]);
    let before = git_state(root);
    assert!(before.staged.contains("src/lib.rs"));
    let status_before = git(root, &["status", "--porcelain"]);

    let cp = start(root, "run-a");
    assert_eq!(cp.checkpoint("nothing yet").unwrap(), None);
    write(
        root,
        "README.md",
        b"# demo\n\nline two, edited\nline three\n",
    );
    let first = cp.checkpoint("Edit README.md").unwrap().unwrap();
    assert_eq!((first.index, first.files_changed), (1, 1));
    assert_eq!(first.reference, "refs/cn-run/run-a/1");
    second_round_of_edits(root);
    let second = cp.checkpoint("Bash").unwrap().unwrap();
    assert_eq!(second.index, 2);
    assert_eq!(second.files_changed, 5, "{second:?}");
    assert_eq!(cp.checkpoints(), vec![first, second.clone()]);

    assert_eq!(
        cn_refs(root),
        [
            "refs/cn-run/run-a/0",
            "refs/cn-run/run-a/1",
            "refs/cn-run/run-a/2"
        ]
    );
    let start_commit = cp.start_snapshot().commit;
    assert_eq!(
        git(root, &["rev-parse", "refs/cn-run/run-a/0^"]),
        before.head
    );
    assert_eq!(
        git(root, &["rev-parse", "refs/cn-run/run-a/1^"]).trim(),
        start_commit
    );
    assert_eq!(
        git(root, &["rev-parse", "refs/cn-run/run-a/2"]).trim(),
        second.commit
    );
    // The start snapshot has the untracked file but not ignored or excluded ones.
    let start_files = git(
        root,
        &["ls-tree", "-r", "--name-only", "refs/cn-run/run-a/0"],
    );
    assert!(
        start_files.lines().any(|f| f == "notes.txt"),
        "{start_files}"
    );
    assert!(!start_files.contains("build.log") && !start_files.contains(".cn-run"));
    assert!(!start_files.contains("secret.env"));
    let latest = git(root, &["ls-tree", "-r", "refs/cn-run/run-a/2"]);
    assert!(
        latest.contains("100755 blob") && latest.contains("\trun.sh"),
        "{latest}"
    );
    assert!(
        latest.contains("120000 blob") && latest.contains("\tlib-link"),
        "{latest}"
    );

    assert_eq!(
        git_state(root),
        before,
        "HEAD, index, branches or stash moved"
    );
    assert_ne!(git(root, &["status", "--porcelain"]), status_before);

    let (patch, stat) = cp.diff_since_start().unwrap();
    let fresh = checkout_of(root, "refs/cn-run/run-a/0");
    let patch_file = fresh.path().join(".git/run.patch");
    fs::write(&patch_file, &patch).unwrap();
    let numstat = git(
        fresh.path(),
        &["apply", "--numstat", patch_file.to_str().unwrap()],
    );
    git(fresh.path(), &["apply", patch_file.to_str().unwrap()]);
    assert_eq!(tree(fresh.path(), &[]), tree(root, NOT_SNAPSHOTTED));
    let column = |i: usize| -> usize {
        numstat
            .lines()
            .filter_map(|l| l.split('\t').nth(i)?.parse::<usize>().ok())
            .sum()
    };
    assert_eq!(stat.files, numstat.lines().count());
    assert_eq!((stat.insertions, stat.deletions), (column(0), column(1)));
    assert_eq!(
        stat.files, 6,
        "README, lib mod, old.txt, run.sh, logo.bin, lib-link"
    );
    assert!(String::from_utf8_lossy(&patch).contains("GIT binary patch"));
}

#[test]
fn rollback_restores_checkpoint_one_then_the_start_byte_for_byte() {
    let repo = fixture();
    let root = repo.path();
    let state = git_state(root);
    let at_start = tree(root, &["build.log", ".cn-run"]);
    let cp = start(root, "run-b");
    write(root, "README.md", b"# demo\n\nrewritten\n");
    cp.checkpoint("Edit README.md").unwrap().unwrap();
    let at_one = tree(root, &["build.log", ".cn-run"]);
    second_round_of_edits(root);
    cp.checkpoint("Write").unwrap().unwrap();
    write(root, "src/lib.rs", b"changed after the last checkpoint\n");
    drop(cp);

    let report = rollback(root, "run-b", Some(1)).unwrap();
    assert_eq!(report.to, 1);
    assert_eq!(tree(root, &["build.log", ".cn-run"]), at_one);
    assert!(
        report.removed.contains(&"src/deep/new/mod.rs".to_string()),
        "{report:?}"
    );
    assert!(
        report.restored.contains(&"old.txt".to_string()),
        "{report:?}"
    );

    let report = rollback(root, "run-b", None).unwrap();
    assert_eq!(report.to, 0);
    assert_eq!(tree(root, &["build.log", ".cn-run"]), at_start);
    assert!(
        !root.join("src/deep").exists(),
        "emptied folders are removed"
    );
    // Ignored and excluded files keep what the run wrote; untracked ones are back.
    assert_eq!(
        fs::read(root.join("build.log")).unwrap(),
        b"written by the run\n"
    );
    assert_eq!(
        fs::read(root.join(".cn-run/out/events.jsonl")).unwrap(),
        b"{}\n{}\n"
    );
    assert_eq!(
        fs::read(root.join("notes.txt")).unwrap(),
        b"untracked before the run\n"
    );
    assert_eq!(
        git_state(root),
        state,
        "rollback moved HEAD, index, branches or stash"
    );
    assert_eq!(
        git(root, &["status", "--porcelain"]),
        "?? .cn-run/\n?? notes.txt\n"
    );
}

#[test]
fn rollback_follows_type_changes_and_keeps_files_the_run_unignored() {
    let repo = fixture();
    let root = repo.path();
    let at_start = tree(root, &[".cn-run"]);
    let cp = start(root, "run-c");
    // A file becomes a folder, a symlink becomes a file, a file becomes a symlink, and
    // the run stops ignoring secret.env.
    fs::remove_file(root.join("old.txt")).unwrap();
    write(root, "old.txt/inside.txt", b"now a folder\n");
    fs::remove_file(root.join("readme-link")).unwrap();
    write(root, "readme-link", b"plain file now\n");
    fs::remove_file(root.join("notes.txt")).unwrap();
    symlink("README.md", root.join("notes.txt")).unwrap();
    write(root, ".gitignore", b"*.log\n");
    cp.checkpoint("Bash").unwrap().unwrap();
    let (patch, _) = cp.diff_since_start().unwrap();

    let fresh = checkout_of(root, "refs/cn-run/run-c/0");
    let patch_file = fresh.path().join(".git/run.patch");
    fs::write(&patch_file, &patch).unwrap();
    git(fresh.path(), &["apply", patch_file.to_str().unwrap()]);
    assert_eq!(
        tree(fresh.path(), &[]),
        tree(root, &["build.log", ".cn-run"])
    );

    let report = rollback(root, "run-c", None).unwrap();
    assert_eq!(tree(root, &[".cn-run"]), at_start);
    assert_eq!(report.kept, vec!["secret.env".to_string()], "{report:?}");
}

#[test]
fn no_checkpoint_when_nothing_changed() {
    let repo = fixture();
    let root = repo.path();
    let cp = start(root, "run-d");
    let _ = fs::read(root.join("README.md")).unwrap();
    write(root, "build.log", b"only an ignored file changed\n");
    write(root, ".cn-run/out/result.json", b"{}\n");
    // Rewriting a file with the same bytes changes its mtime but not the snapshot.
    write(root, "src/lib.rs", b"pub fn one() -> u32 {\n    1\n}\n");
    assert_eq!(cp.checkpoint("Bash").unwrap(), None);
    assert_eq!(cp.checkpoints(), vec![]);
    assert_eq!(cn_refs(root), ["refs/cn-run/run-d/0"]);
    let (patch, stat) = cp.diff_since_start().unwrap();
    assert!(patch.is_empty());
    assert_eq!((stat.files, stat.insertions, stat.deletions), (0, 0, 0));
}

#[test]
fn a_same_size_rewrite_right_after_a_checkpoint_is_not_missed() {
    let repo = fixture();
    let root = repo.path();
    let cp = start(root, "run-e");
    for round in 0..5u8 {
        // Same length every time, written well within one clock tick of the snapshot.
        write(root, "README.md", format!("version {round}\n").as_bytes());
        let made = cp.checkpoint("Write README.md").unwrap();
        assert!(made.is_some(), "round {round} was not noticed");
    }
    assert_eq!(cp.checkpoints().len(), 5);
}

#[test]
fn outside_a_repo_or_before_the_first_commit_there_is_a_reason() {
    let plain = tempfile::tempdir().unwrap();
    let reason = GitCheckpointer::start(plain.path(), "run-f", &[])
        .unwrap()
        .err()
        .unwrap();
    assert!(matches!(reason, Unavailable::NotARepository(_)), "{reason}");
    let reason = reason.to_string();
    assert!(reason.contains("not inside a git repository"), "{reason}");

    let unborn = tempfile::tempdir().unwrap();
    git(unborn.path(), &["init", "-q"]);
    write(unborn.path(), "a.txt", b"a\n");
    let reason = GitCheckpointer::start(unborn.path(), "run-f", &[])
        .unwrap()
        .err()
        .unwrap();
    assert!(matches!(reason, Unavailable::NoCommit(_)), "{reason}");
    let reason = reason.to_string();
    assert!(reason.contains("no commit yet"), "{reason}");
    assert!(matches!(
        rollback(plain.path(), "run-f", None),
        Err(CheckpointError::NoRepository(_))
    ));
}

#[test]
fn runs_are_listed_and_bad_requests_are_refused() {
    let repo = fixture();
    let root = repo.path();
    let cp = start(root, "run-g");
    write(root, "README.md", b"changed\n");
    cp.checkpoint("Write").unwrap().unwrap();
    let other = start(root.join("src").as_path(), "run-h");
    assert_eq!(
        list_runs(root).unwrap(),
        vec![("run-g".to_string(), 1), ("run-h".to_string(), 0)]
    );
    assert!(matches!(
        GitCheckpointer::start(root, "run-g", &[]),
        Err(CheckpointError::RunExists(_))
    ));
    assert!(matches!(
        GitCheckpointer::start(root, "bad/id", &[]),
        Err(CheckpointError::InvalidRunId(_))
    ));
    assert!(matches!(
        rollback(root, "run-g", Some(7)),
        Err(CheckpointError::CheckpointNotFound {
            index: 7,
            last: 1,
            ..
        })
    ));
    assert!(matches!(
        rollback(root, "nope", None),
        Err(CheckpointError::RunNotFound(_))
    ));
    drop(other);
}

#[test]
fn a_repository_cloned_inside_the_tree_is_left_out() {
    let repo = fixture();
    let root = repo.path();
    let cp = start(root, "run-i");
    let nested = root.join("vendor/dep");
    fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "dep.rs", b"fn dep() {}\n");
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "dep"]);
    write(root, "README.md", b"uses a vendored dependency\n");
    let made = cp.checkpoint("Bash").unwrap().unwrap();
    assert_eq!(made.files_changed, 1);
    let files = git(
        root,
        &["ls-tree", "-r", "--name-only", "refs/cn-run/run-i/1"],
    );
    assert!(!files.contains("vendor"), "{files}");
    rollback(root, "run-i", None).unwrap();
    assert_eq!(fs::read(nested.join("dep.rs")).unwrap(), b"fn dep() {}\n");
    assert_eq!(
        fs::read(root.join("README.md")).unwrap(),
        b"# demo\n\nline two\nline three\n"
    );
}
