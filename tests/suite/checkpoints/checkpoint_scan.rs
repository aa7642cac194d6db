//! Checkpoints that read only what changed, checked against git itself: after every kind
//! of change, the snapshot tree (from the incremental scan, or from the one path a Write
//! names) is the tree `git add -A && git write-tree` makes of the same working tree in a
//! scratch index. Also: what is too big is left out, listed, named in the patch without
//! content and left alone by rollback; pruning removes a run's objects and nothing a
//! user's commit still holds; cn-run's git never runs the repository's programs.
#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use cn_run::checkpoint::{Checkpointer, GitCheckpointer, Limits, rollback};

use crate::support::runner::git;

pub(super) fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// A small committed repository with folders, an ignore rule and a symlink.
pub(super) fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    git(root, &["init", "-q"]);
    for d in 0..4 {
        for f in 0..5 {
            write(
                root,
                &format!("d{d}/sub/f{f}.txt"),
                format!("{d} {f}\n").as_bytes(),
            );
        }
    }
    write(root, "top.txt", b"top\n");
    write(root, ".gitignore", b"*.log\nbuild/\n");
    symlink("top.txt", root.join("link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial"]);
    tmp
}

/// The tree git makes of the working tree (tracked + untracked, not ignored), into a
/// scratch index so the user's stays as it is.
pub(super) fn git_tree(root: &Path) -> String {
    let scratch = root.join(".git/scratch-index");
    let _ = fs::remove_file(&scratch);
    fs::copy(root.join(".git/index"), &scratch).unwrap();
    // Dated one second after the epoch, the copy makes git hash every file again: an
    // entry not older than its index is "racily clean" to git, so it compares bytes, not
    // stat data (git compares whole seconds, and a same-size write, e.g. through a shared
    // mapping, in the second the file was made looks unchanged to it).
    fs::File::options()
        .write(true)
        .open(&scratch)
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1))
        .unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(root)
            .env("GIT_INDEX_FILE", &scratch)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    run(&["add", "-A"]);
    let tree = run(&["write-tree"]);
    fs::remove_file(&scratch).unwrap();
    tree
}

pub(super) fn tree_of(root: &Path, commit: &str) -> String {
    git(root, &["rev-parse", &format!("{commit}^{{tree}}")])
        .trim()
        .to_owned()
}

pub(super) fn start(root: &Path, id: &str) -> GitCheckpointer {
    GitCheckpointer::start(root, id, &[]).unwrap().unwrap()
}

/// A change made to the working tree.
pub(super) type Change<'a> = Box<dyn Fn(&Path) + 'a>;

/// Makes each change, then a scanning checkpoint: its tree (or the last one's, when it
/// made none) is git's tree of the same state.
pub(super) fn each_checkpoint_is_gits_tree(
    root: &Path,
    cp: &GitCheckpointer,
    changes: Vec<(&str, Change<'_>)>,
) {
    for (what, change) in changes {
        change(root);
        let made = cp.checkpoint(what).unwrap();
        let last = cp.checkpoints();
        let commit = match (&made, last.last()) {
            (Some(c), _) => c.commit.clone(),
            (None, Some(c)) => c.commit.clone(),
            (None, None) => cp.start_snapshot().commit,
        };
        let (ours, gits) = (tree_of(root, &commit), git_tree(root));
        if ours != gits {
            let differ = git(root, &["diff-tree", "-r", &ours, &gits]);
            panic!("after: {what}: the checkpoint's tree {ours} is not git's {gits}:\n{differ}");
        }
    }
}

/// Each change, then a scanning checkpoint: its tree is git's tree of the same state.
#[test]
fn the_scan_finds_every_kind_of_change_git_finds() {
    let tmp = repo();
    let root = tmp.path();
    let cp = start(root, "scan");
    let changes: Vec<(&str, Change<'_>)> = vec![
        (
            "modify",
            Box::new(|r| write(r, "d0/sub/f1.txt", b"changed\n")),
        ),
        (
            "same size",
            Box::new(|r| write(r, "d0/sub/f1.txt", b"CHANGED\n")),
        ),
        (
            "new file",
            Box::new(|r| write(r, "d1/sub/new.txt", b"new\n")),
        ),
        (
            "new nested folder",
            Box::new(|r| write(r, "d2/a/b/c/deep.txt", b"deep\n")),
        ),
        (
            "delete",
            Box::new(|r| fs::remove_file(r.join("d3/sub/f0.txt")).unwrap()),
        ),
        (
            "delete folder",
            Box::new(|r| fs::remove_dir_all(r.join("d2/sub")).unwrap()),
        ),
        (
            "rename",
            Box::new(|r| fs::rename(r.join("d1/sub/f2.txt"), r.join("d1/f2-moved.txt")).unwrap()),
        ),
        (
            "executable",
            Box::new(|r| {
                let p = r.join("d0/sub/f3.txt");
                fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
            }),
        ),
        (
            "file becomes folder",
            Box::new(|r| {
                fs::remove_file(r.join("top.txt")).unwrap();
                write(r, "top.txt/inside.txt", b"inside\n");
            }),
        ),
        (
            "folder becomes file",
            Box::new(|r| {
                fs::remove_dir_all(r.join("d3")).unwrap();
                write(r, "d3", b"a file now\n");
            }),
        ),
        (
            "symlink retargeted",
            Box::new(|r| {
                fs::remove_file(r.join("link")).unwrap();
                symlink("d3", r.join("link")).unwrap();
            }),
        ),
        (
            "ignored file only",
            Box::new(|r| write(r, "d0/noise.log", b"log\n")),
        ),
        (
            "ignored folder",
            Box::new(|r| write(r, "build/out/x.o", b"obj\n")),
        ),
        (
            "un-ignoring",
            Box::new(|r| write(r, ".gitignore", b"build/\n")),
        ),
    ];
    each_checkpoint_is_gits_tree(root, &cp, changes);
}

/// A Write names its file: the checkpoint reads that file only, and its tree is still
/// git's tree of the whole state.
#[test]
fn a_named_file_checkpoint_gives_the_same_tree_as_git() {
    let tmp = repo();
    let root = tmp.path();
    let cp = start(root, "named");
    let cases: [(&str, &[u8]); 6] = [
        ("d0/sub/f0.txt", b"edited\n"),
        ("d1/sub/f4.txt", b"1 4\nmore\n"),
        ("brand/new/dir/file.rs", b"fn main() {}\n"),
        ("top.txt", b"top, rewritten\n"),
        ("d2/sub/f2.txt", b"\x00\x01binary\xff"),
        ("notes.txt", b"a new file at the top\n"),
    ];
    for (rel, content) in cases {
        write(root, rel, content);
        let made = cp
            .checkpoint_paths(&format!("Write {rel}"), &[PathBuf::from(rel)])
            .unwrap()
            .unwrap();
        assert_eq!(
            tree_of(root, &made.commit),
            git_tree(root),
            "after writing {rel}"
        );
    }
    // An ignored path named by a Write stays out, as git leaves it out.
    write(root, "x.log", b"ignored\n");
    assert!(
        cp.checkpoint_paths("Write x.log", &[root.join("x.log")])
            .unwrap()
            .is_none()
    );
    // A file deleted, then named: removed from the tree.
    fs::remove_file(root.join("notes.txt")).unwrap();
    let made = cp
        .checkpoint_paths("Edit notes.txt", &[PathBuf::from("notes.txt")])
        .unwrap()
        .unwrap();
    assert_eq!(tree_of(root, &made.commit), git_tree(root));
    // Rewriting with the same bytes makes no checkpoint.
    write(root, "top.txt", b"top, rewritten\n");
    assert!(
        cp.checkpoint_paths("Write top.txt", &[PathBuf::from("top.txt")])
            .unwrap()
            .is_none()
    );
}

fn small_limits() -> Limits {
    Limits {
        max_file_bytes: 1000,
        max_dir_files: 20,
    }
}

/// Too-big untracked files and folders are left out, listed, named in the patch without
/// content, and left alone by rollback; a tracked big file is snapshotted as ever.
#[test]
fn big_untracked_files_and_folders_stay_out_and_rollback_keeps_them() {
    let tmp = repo();
    let root = tmp.path();
    write(root, "tracked-big.dat", &vec![b'T'; 5000]);
    git(root, &["add", "tracked-big.dat"]);
    git(root, &["commit", "-q", "-m", "a big tracked file"]);
    let cp = GitCheckpointer::start_with(root, "big", &[], small_limits())
        .unwrap()
        .unwrap();
    let artifact = vec![b'A'; 4000];
    write(root, "target/big.bin", &artifact);
    for i in 0..30 {
        write(root, &format!("node_modules/pkg{i}/index.js"), b"x\n");
    }
    write(root, "small-new.txt", b"small\n");
    write(root, "tracked-big.dat", &vec![b'U'; 6000]);
    let made = cp.checkpoint("Bash").unwrap().unwrap();
    let skipped: Vec<(String, u64)> = made
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.bytes))
        .collect();
    assert_eq!(skipped[0].0, "node_modules");
    assert_eq!(skipped[1], ("target/big.bin".to_owned(), 4000));
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    let listed = git(root, &["ls-tree", "-r", "--name-only", &made.commit]);
    assert!(
        !listed.contains("big.bin") && !listed.contains("node_modules"),
        "{listed}"
    );
    assert!(listed.contains("small-new.txt") && listed.contains("tracked-big.dat"));

    let (patch, _) = cp.patch_since_start(false).unwrap();
    let text = String::from_utf8_lossy(&patch);
    assert!(text.contains("target/big.bin (4000 bytes)"), "{text}");
    assert!(
        !text.contains("AAAA"),
        "the artifact's content is in the patch"
    );
    // The patch still applies (the note sits before the first file).
    let fresh = tempfile::tempdir().unwrap();
    git(fresh.path(), &["clone", "-q", root.to_str().unwrap(), "c"]);
    let clone = fresh.path().join("c");
    fs::write(clone.join(".git/p.patch"), &patch).unwrap();
    git(&clone, &["apply", "--check", ".git/p.patch"]);

    let report = rollback(root, "big", None).unwrap();
    assert_eq!(fs::read(root.join("target/big.bin")).unwrap(), artifact);
    assert!(root.join("node_modules/pkg29/index.js").exists());
    assert!(!root.join("small-new.txt").exists(), "{report:?}");
    assert_eq!(
        fs::read(root.join("tracked-big.dat")).unwrap(),
        vec![b'T'; 5000]
    );
}

/// A skipped file that shrinks under the limit is snapshotted; one that goes is no
/// longer listed.
#[test]
fn a_skipped_file_is_looked_at_again() {
    let tmp = repo();
    let root = tmp.path();
    let cp = GitCheckpointer::start_with(root, "again", &[], small_limits())
        .unwrap()
        .unwrap();
    write(root, "out.bin", &[1u8; 2000]);
    write(root, "other.bin", &[2u8; 3000]);
    let made = cp.checkpoint("Bash").unwrap();
    assert!(
        made.is_none(),
        "only too-big files changed: nothing to snapshot"
    );
    assert_eq!(cp.skipped().len(), 2);
    fs::write(root.join("out.bin"), [1u8; 10]).unwrap();
    fs::remove_file(root.join("other.bin")).unwrap();
    let made = cp.checkpoint("Bash").unwrap().unwrap();
    assert!(made.skipped.is_empty(), "{:?}", made.skipped);
    assert_eq!(tree_of(root, &made.commit), git_tree(root));
}

/// Binary files are named in the default patch, with content only when asked.
#[test]
fn binary_content_is_in_the_patch_only_when_asked() {
    let tmp = repo();
    let root = tmp.path();
    let cp = start(root, "bin");
    write(
        root,
        "image.png",
        &[0x89, b'P', b'N', b'G', 0, 0, 1, 2, 3, 0xff, 0],
    );
    cp.checkpoint("Bash").unwrap().unwrap();
    let (named, stat) = cp.patch_since_start(false).unwrap();
    let named = String::from_utf8_lossy(&named);
    assert!(
        named.contains("Binary files /dev/null and b/image.png differ"),
        "{named}"
    );
    assert!(!named.contains("GIT binary patch"));
    assert_eq!(stat.files, 1);
    let (full, _) = cp.patch_since_start(true).unwrap();
    assert!(String::from_utf8_lossy(&full).contains("GIT binary patch"));
}

fn loose_objects(root: &Path) -> usize {
    let mut n = 0;
    for dir in fs::read_dir(root.join(".git/objects")).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if name.len() == 2 {
            n += fs::read_dir(dir.path()).unwrap().count();
        }
    }
    n
}

/// Pruning a run removes its refs and the objects only it held; a blob a user's commit
/// also holds, and another run's objects, stay.
#[test]
fn pruning_removes_a_runs_objects_and_nothing_else_reaches() {
    let tmp = repo();
    let root = tmp.path();
    let before = loose_objects(root);
    let cp = start(root, "prune-me");
    write(root, "kept-by-user.txt", b"the user commits this\n");
    write(root, "only-run.txt", b"only the run had this\n");
    cp.checkpoint("Bash").unwrap().unwrap();
    drop(cp);
    let added = cn_run::checkpoint::added_bytes(root, "prune-me").unwrap();
    assert!(added > 0);
    fs::remove_file(root.join("only-run.txt")).unwrap();
    let other = start(root, "other-run");
    write(root, "other.txt", b"the other run\n");
    other.checkpoint("Bash").unwrap().unwrap();
    drop(other);
    fs::remove_file(root.join("other.txt")).unwrap();
    git(root, &["add", "kept-by-user.txt"]);
    git(root, &["commit", "-q", "-m", "user commit"]);
    let grown = loose_objects(root);

    let report = cn_run::checkpoint::prune(root, &["prune-me".to_owned()]).unwrap();
    assert_eq!(report.runs, ["prune-me"]);
    assert!(report.objects_removed >= 3, "{report:?}");
    assert!(git(root, &["for-each-ref", "refs/cn-run/prune-me"]).is_empty());
    assert!(!git(root, &["for-each-ref", "refs/cn-run/other-run"]).is_empty());
    assert!(loose_objects(root) < grown && loose_objects(root) > before);
    // Everything still reachable is intact: the user's commit and the other run.
    git(root, &["fsck", "--no-dangling", "--connectivity-only"]);
    assert_eq!(
        git(root, &["show", "HEAD:kept-by-user.txt"]),
        "the user commits this\n"
    );
    rollback(root, "other-run", Some(1)).unwrap();
    assert_eq!(
        fs::read(root.join("other.txt")).unwrap(),
        b"the other run\n"
    );
}

/// `keep_newest` keeps the newest runs' refs only.
#[test]
fn keeping_the_newest_runs_removes_the_older_ones() {
    let tmp = repo();
    let root = tmp.path();
    for i in 0..3 {
        let cp = start(root, &format!("k{i}"));
        write(root, &format!("run{i}.txt"), b"x\n");
        cp.checkpoint("Bash").unwrap().unwrap();
    }
    let report = cn_run::checkpoint::keep_newest(root, 1).unwrap();
    assert_eq!(report.runs.len(), 2, "{report:?}");
    let left = cn_run::checkpoint::list_runs(root).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].0, "k2", "the newest run stays");
    git(root, &["fsck", "--no-dangling", "--connectivity-only"]);
}

/// A repository that plants programs for git to run (fsmonitor, hooks, a clean filter):
/// cn-run's snapshots, diff, rollback and prune run none of them. Plain `git status`
/// over the same repository does run the fsmonitor (the trap is live).
#[test]
fn cn_runs_git_work_runs_no_program_the_repository_names() {
    let tmp = repo();
    let root = tmp.path();
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = |name: &str| marker_dir.path().join(name);
    let script = |name: &str| {
        let path = root.join(format!(".git/{name}.sh"));
        let body = format!(
            "#!/bin/sh\necho ran >> {}\nexit 0\n",
            marker(name).display()
        );
        fs::write(&path, body).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let fsmonitor = script("fsmonitor");
    git(
        root,
        &["config", "core.fsmonitor", fsmonitor.to_str().unwrap()],
    );
    for hook in ["post-index-change", "pre-auto-gc", "reference-transaction"] {
        let path = script(hook);
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::copy(path, root.join(".git/hooks").join(hook)).unwrap();
    }
    let clean = script("clean");
    git(
        root,
        &["config", "filter.trap.clean", clean.to_str().unwrap()],
    );
    write(root, ".git/info/attributes", b"*.trap filter=trap\n");

    let cp = start(root, "safe");
    write(root, "d0/sub/f0.txt", b"changed\n");
    write(root, "new.trap", b"filtered?\n");
    cp.checkpoint("Bash").unwrap().unwrap();
    cp.checkpoint_paths("Write", &[PathBuf::from("d1/sub/f0.txt")])
        .unwrap();
    let _ = cp.diff_since_start().unwrap();
    drop(cp);
    rollback(root, "safe", None).unwrap();
    cn_run::checkpoint::prune(root, &["safe".to_owned()]).unwrap();
    let ran: Vec<&str> = [
        "fsmonitor",
        "post-index-change",
        "pre-auto-gc",
        "reference-transaction",
        "clean",
    ]
    .into_iter()
    .filter(|m| marker(m).exists())
    .collect();
    assert!(ran.is_empty(), "cn-run ran {ran:?}");

    // The control: git itself, unprotected, runs the planted fsmonitor.
    let _ = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        marker("fsmonitor").exists(),
        "the planted fsmonitor is not live"
    );
}
