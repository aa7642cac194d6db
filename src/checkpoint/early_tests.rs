//! The start snapshot taken from the run's git status holds the same tree as one taken by
//! a scan of every file and folder, whatever the workspace held when the run started; and
//! the first scan after it still finds every change.

use std::path::{Path, PathBuf};

use super::*;
use crate::checkpoint::{Checkpointer, Limits};
use crate::test_git::{commit_files, git};

fn write(ws: &Path, rel: &str, text: &str) {
    let path = ws.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A committed repository: tracked files in folders, an ignored folder and pattern.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap().join("ws");
    commit_files(
        &ws,
        &[
            ("a.txt", "a\n"),
            ("src/lib.rs", "lib\n"),
            ("src/deep/mod.rs", "mod\n"),
            ("docs/guide.md", "guide\n"),
            ("run.sh", "#!/bin/sh\n"),
            (".gitignore", "build/\n*.log\nout/\n"),
        ],
    );
    (tmp, ws)
}

fn limits() -> Limits {
    Limits {
        max_file_bytes: 64,
        max_dir_files: 3,
    }
}

/// The start taken from the status (as a new run takes it) and by a scan.
fn both_starts(ws: &Path) -> (GitCheckpointer, GitCheckpointer) {
    let out = ws.join("out");
    let seeded = GitCheckpointer::start_seeded(
        ws,
        |repo| {
            let status = StatusOf {
                options: crate::agent::status_options,
                lines: crate::agent::status_lines,
                unavailable: crate::agent::STATUS_UNAVAILABLE,
            };
            let (_, seen) = status_and_seen(repo, status);
            assert!(seen.is_some(), "the status was taken");
            Some((("seeded".to_owned(), vec![out.clone()], limits()), seen))
        },
        |_, tree| Ok(tree),
    )
    .unwrap()
    .unwrap();
    let scanned = GitCheckpointer::start_with(ws, "scanned", std::slice::from_ref(&out), limits())
        .unwrap()
        .unwrap();
    (seeded, scanned)
}

fn tree_of(ws: &Path, reference: &str) -> String {
    git(ws, &["rev-parse", &format!("{reference}^{{tree}}")])
}

/// Each way a workspace can differ from its last commit when a run starts.
/// A named way to change a workspace.
type Making = (&'static str, fn(&Path));

fn workspace_states() -> Vec<Making> {
    vec![
        ("clean", |_| {}),
        ("a modified file", |ws| write(ws, "src/lib.rs", "changed\n")),
        ("a deleted file", |ws| {
            std::fs::remove_file(ws.join("docs/guide.md")).unwrap()
        }),
        ("untracked files in tracked folders", |ws| {
            write(ws, "new.txt", "n\n");
            write(ws, "src/deep/new.rs", "n\n");
        }),
        ("an untracked folder tree", |ws| {
            write(ws, "fresh/one.txt", "1\n");
            write(ws, "fresh/inner/two.txt", "2\n");
        }),
        ("an untracked folder of ignored files only", |ws| {
            write(ws, "logs/a.log", "x\n");
        }),
        ("an untracked folder over the file limit", |ws| {
            for i in 0..5 {
                write(ws, &format!("node_modules/p{i}.js"), "x\n");
            }
        }),
        ("an untracked file over the size limit", |ws| {
            write(ws, "big.bin", &"x".repeat(200));
        }),
        ("ignored files", |ws| {
            write(ws, "build/out.o", "o\n");
            write(ws, "src/trace.log", "t\n");
        }),
        ("a staged change and a staged new file", |ws| {
            write(ws, "a.txt", "staged\n");
            write(ws, "staged.txt", "s\n");
            git(ws, &["add", "a.txt", "staged.txt"]);
        }),
        ("a staged change then changed again", |ws| {
            write(ws, "a.txt", "staged\n");
            git(ws, &["add", "a.txt"]);
            write(ws, "a.txt", "again\n");
        }),
        ("a file that became a symlink", |ws| {
            std::fs::remove_file(ws.join("a.txt")).unwrap();
            std::os::unix::fs::symlink("src/lib.rs", ws.join("a.txt")).unwrap();
        }),
        ("a new symlink", |ws| {
            std::os::unix::fs::symlink("nowhere", ws.join("link")).unwrap();
        }),
        ("a mode change", |ws| {
            use std::os::unix::fs::PermissionsExt as _;
            let p = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(ws.join("run.sh"), p).unwrap();
        }),
        ("a changed .gitignore", |ws| {
            write(ws, ".gitignore", "build/\nout/\n");
            write(ws, "src/trace.log", "t\n");
        }),
        ("a nested repository", |ws| {
            write(ws, "vendor/lib/x.c", "x\n");
            git(&ws.join("vendor/lib"), &["init", "-q"]);
        }),
        ("the run folder in the workspace", |ws| {
            write(ws, "out/events.jsonl", "{}\n");
            write(ws, "other/out/keep.txt", "k\n");
        }),
        ("a folder that replaced a file", |ws| {
            std::fs::remove_file(ws.join("docs/guide.md")).unwrap();
            write(ws, "docs/guide.md/inside.txt", "i\n");
        }),
    ]
}

#[test]
fn the_start_from_the_status_is_the_start_a_scan_takes() {
    for (what, make) in workspace_states() {
        let (_tmp, ws) = repo();
        make(&ws);
        let (seeded, scanned) = both_starts(&ws);
        assert_eq!(
            tree_of(&ws, "refs/cn-run/seeded/0"),
            tree_of(&ws, "refs/cn-run/scanned/0"),
            "{what}: the start trees differ"
        );
        assert_eq!(
            seeded.start_snapshot().skipped,
            scanned.start_snapshot().skipped,
            "{what}: what was left out differs"
        );
    }
}

#[test]
fn the_first_scan_after_a_start_from_the_status_finds_every_change() {
    let (_tmp, ws) = repo();
    write(&ws, "src/lib.rs", "before the run\n");
    let (seeded, scanned) = both_starts(&ws);
    // What a Bash call does: a change, a new file in a known folder, a new folder.
    write(&ws, "docs/guide.md", "edited\n");
    write(&ws, "src/deep/added.rs", "added\n");
    write(&ws, "newdir/file.txt", "f\n");
    let a = seeded.checkpoint("Bash").unwrap().expect("a change");
    let b = scanned.checkpoint("Bash").unwrap().expect("a change");
    assert_eq!(a.files_changed, 3, "{a:?}");
    assert_eq!(a.files_changed, b.files_changed);
    assert_eq!(
        tree_of(&ws, "refs/cn-run/seeded/1"),
        tree_of(&ws, "refs/cn-run/scanned/1")
    );
    // And a Write's checkpoint (only its file read) scans nothing more.
    write(&ws, "docs/guide.md", "written\n");
    write(&ws, "unseen.txt", "not named\n");
    let w = seeded
        .checkpoint_paths("Write", &[ws.join("docs/guide.md")])
        .unwrap()
        .expect("a change");
    assert_eq!(w.files_changed, 1, "{w:?}");
}

#[test]
fn a_write_checkpoint_counts_the_files_git_counts_between_the_trees() {
    let (_tmp, ws) = repo();
    let (seeded, _) = both_starts(&ws);
    let mut last = "refs/cn-run/seeded/0".to_owned();
    // Each change names its paths, as a Write or Edit names its file.
    type Named = (&'static str, fn(&Path), Vec<&'static str>);
    let changes: Vec<Named> = vec![
        (
            "a modified file",
            |ws| write(ws, "a.txt", "b\n"),
            vec!["a.txt"],
        ),
        (
            "two files, one new in a new folder",
            |ws| {
                write(ws, "src/lib.rs", "lib 2\n");
                write(ws, "made/here/new.rs", "n\n");
            },
            vec!["src/lib.rs", "made/here/new.rs"],
        ),
        (
            "a deleted file and an unchanged one",
            |ws| {
                std::fs::remove_file(ws.join("docs/guide.md")).unwrap();
            },
            vec!["docs/guide.md", "run.sh"],
        ),
        (
            "a file that became a symlink",
            |ws| {
                std::fs::remove_file(ws.join("a.txt")).unwrap();
                std::os::unix::fs::symlink("run.sh", ws.join("a.txt")).unwrap();
            },
            vec!["a.txt"],
        ),
        (
            "a file that became a folder",
            |ws| {
                std::fs::remove_file(ws.join("src/lib.rs")).unwrap();
                write(ws, "src/lib.rs/one.rs", "1\n");
                write(ws, "src/lib.rs/two.rs", "2\n");
            },
            vec!["src/lib.rs", "src/lib.rs/one.rs", "src/lib.rs/two.rs"],
        ),
    ];
    for (what, change, named) in changes {
        change(&ws);
        let paths: Vec<PathBuf> = named.iter().map(|p| ws.join(p)).collect();
        let cp = seeded.checkpoint_paths(what, &paths).unwrap().expect(what);
        let listed = git(
            &ws,
            &["diff-tree", "-r", "--name-only", &last, &cp.reference],
        );
        assert_eq!(cp.files_changed, listed.lines().count(), "{what}: {listed}");
        last = cp.reference;
    }
}
