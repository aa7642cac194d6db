//! Checkpoints whose scan takes what changed from the folder watch (every folder the
//! first scan read is watched): after each kind of change, made the ways programs make
//! them, the snapshot tree is git's tree of the same working tree. A file with another
//! link is seen when written through it; a write through a link made during the run from
//! a folder no watch covers is in the run's diff all the same (the end of the run stats
//! every file when a checkpoint trusted the watch).
#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use std::cell::RefCell;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use cn_run::checkpoint::Checkpointer;

use super::checkpoint_scan::{
    Change, each_checkpoint_is_gits_tree, git_tree, repo, start, tree_of, write,
};
use crate::support::runner::{cn_run, git_init, run, write_files};

/// Writes `text` at the start of `path` through a shared mapping, its descriptor closed
/// before the write (python3's mmap).
fn write_mapped(path: &Path, text: &str) {
    let program = "import mmap, os, sys\n\
fd = os.open(sys.argv[1], os.O_RDWR)\n\
m = mmap.mmap(fd, 0)\n\
os.close(fd)\n\
m[:len(sys.argv[2])] = sys.argv[2].encode()\n\
m.close()\n";
    let status = Command::new("python3")
        .args(["-c", program])
        .arg(path)
        .arg(text)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Each change, then a scanning checkpoint: its tree is git's tree of the same state,
/// and the checkpoints took their changes from the watch.
#[test]
fn the_watched_scan_finds_every_kind_of_change_git_finds() {
    let tmp = repo();
    let root = tmp.path();
    let outside = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    let cp = start(root, "watched");
    let held: RefCell<Option<fs::File>> = RefCell::new(None);
    let open_append = |r: &Path, rel: &str| {
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(r.join(rel))
            .unwrap();
        f.write_all(b"first\n").unwrap();
        *held.borrow_mut() = Some(f);
    };
    let out = outside.path().to_path_buf();
    let changes: Vec<(&str, Change<'_>)> = vec![
        ("held open", Box::new(|r| open_append(r, "d0/sub/f0.txt"))),
        (
            "written later through the held descriptor",
            Box::new(|_| {
                let mut held = held.borrow_mut();
                held.as_mut().unwrap().write_all(b"later\n").unwrap();
            }),
        ),
        ("closed after", Box::new(|_| drop(held.borrow_mut().take()))),
        (
            "mapped write",
            Box::new(|r| write_mapped(&r.join("d1/sub/f0.txt"), "M")),
        ),
        (
            "new nested folders",
            Box::new(|r| write(r, "d1/new/a/b/x.txt", b"x\n")),
        ),
        (
            "in the folders made before",
            Box::new(|r| {
                write(r, "d1/new/a/b/c/y.txt", b"y\n");
                write(r, "d1/new/a/b/x.txt", b"x, again\n");
            }),
        ),
        (
            "a folder moved in",
            Box::new(|r| {
                write(&out, "tree/one.txt", b"one\n");
                write(&out, "tree/deeper/two.txt", b"two\n");
                fs::rename(out.join("tree"), r.join("moved-in")).unwrap();
            }),
        ),
        (
            "inside the folder moved in",
            Box::new(|r| write(r, "moved-in/deeper/two.txt", b"2\n")),
        ),
        (
            "a folder renamed",
            Box::new(|r| fs::rename(r.join("d2"), r.join("d2-renamed")).unwrap()),
        ),
        (
            "inside the renamed folder",
            Box::new(|r| write(r, "d2-renamed/sub/f1.txt", b"r\n")),
        ),
        (
            "removed and made again",
            Box::new(|r| {
                fs::remove_dir_all(r.join("d3/sub")).unwrap();
                write(r, "d3/sub/f9.txt", b"nine\n");
            }),
        ),
        (
            "in the folder made again",
            Box::new(|r| write(r, "d3/sub/f9.txt", b"9\n")),
        ),
        (
            "saved over by a rename",
            Box::new(|r| {
                write(r, "d0/sub/.f2.tmp", b"saved atomically\n");
                fs::rename(r.join("d0/sub/.f2.tmp"), r.join("d0/sub/f2.txt")).unwrap();
            }),
        ),
        (
            "moved out of the tree",
            Box::new(|r| {
                fs::rename(r.join("d0/sub/f3.txt"), out.join("f3.txt")).unwrap();
            }),
        ),
        (
            "moved into the tree",
            Box::new(|r| {
                fs::rename(out.join("f3.txt"), r.join("d1/f3-back.txt")).unwrap();
            }),
        ),
        (
            "truncated, same size",
            Box::new(|r| {
                let f = fs::OpenOptions::new()
                    .write(true)
                    .open(r.join("d0/sub/f4.txt"))
                    .unwrap();
                f.set_len(0).unwrap();
                (&f).write_all(b"0 X\n").unwrap();
            }),
        ),
        (
            "executable",
            Box::new(|r| {
                let p = r.join("d1/sub/f1.txt");
                fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
            }),
        ),
        (
            "symlink to a folder",
            Box::new(|r| symlink("d1", r.join("dlink")).unwrap()),
        ),
        (
            "made and removed",
            Box::new(|r| {
                write(r, "d1/brief.txt", b"gone soon\n");
                fs::remove_file(r.join("d1/brief.txt")).unwrap();
            }),
        ),
        (
            "ignored file",
            Box::new(|r| write(r, "d1/new/trace.log", b"log\n")),
        ),
        (
            "un-ignoring it",
            Box::new(|r| write(r, ".gitignore", b"build/\n")),
        ),
        (
            "copied tree",
            Box::new(|r| {
                let status = Command::new("cp")
                    .arg("-r")
                    .arg(r.join("d1/new"))
                    .arg(r.join("copy"))
                    .status()
                    .unwrap();
                assert!(status.success());
            }),
        ),
        (
            "by a shell",
            Box::new(|r| {
                let status = Command::new("sh").arg("-c")
                .arg("echo more >> d1/sub/f2.txt && mkdir -p sh/x && echo s > sh/x/s.txt && rm d1/sub/f3.txt")
                .current_dir(r).status().unwrap();
                assert!(status.success());
            }),
        ),
        (
            "file becomes folder",
            Box::new(|r| {
                fs::remove_file(r.join("top.txt")).unwrap();
                write(r, "top.txt/inside.txt", b"inside\n");
            }),
        ),
    ];
    each_checkpoint_is_gits_tree(root, &cp, changes);
    assert!(
        cp.used_events(),
        "no checkpoint took its changes from the watch"
    );
}

/// A tracked file with a second name in an ignored (unwatched) folder: written through
/// that name, the next checkpoint has the change.
#[test]
fn a_write_through_another_link_is_in_the_next_checkpoint() {
    let tmp = repo();
    let root = tmp.path();
    fs::create_dir_all(root.join("build")).unwrap();
    fs::hard_link(root.join("d0/sub/f1.txt"), root.join("build/alias")).unwrap();
    let cp = start(root, "linked");
    write(root, "d1/sub/f0.txt", b"a change the watch sees\n");
    cp.checkpoint("first").unwrap().unwrap();
    let mut alias = fs::OpenOptions::new()
        .append(true)
        .open(root.join("build/alias"))
        .unwrap();
    alias.write_all(b"through the other name\n").unwrap();
    drop(alias);
    let made = cp.checkpoint("through the link").unwrap().unwrap();
    assert_eq!(tree_of(root, &made.commit), git_tree(root));
    assert!(cp.used_events());
}

/// Through the binary: after a first Bash call (whose checkpoint reads every folder), a
/// second links a tracked file from an ignored folder and writes through the link (no
/// folder watch reports it); the run's diff has the change.
#[test]
fn a_write_no_watch_reports_is_in_the_runs_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("d{}/f{i}.txt", i % 4), format!("file {i}\n")))
        .chain([(".gitignore".into(), "build/\n".into())])
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(&ws, &files);
    git_init(&ws);
    let script = "turns:
  - tool_calls:
      - {name: Bash, arguments: {command: 'echo x > d2/f6.txt'}}
  - tool_calls:
      - {name: Bash, arguments: {command: 'mkdir -p build && ln d1/f5.txt build/alias && echo hidden >> build/alias'}}
  - tool_calls:
      - {name: Bash, arguments: {command: 'echo y > d3/f7.txt'}}
  - text: done
";
    fs::write(tmp.path().join("s.yaml"), script).unwrap();
    let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: p\npermissions: {mode: auto}\n";
    fs::write(tmp.path().join("job.yaml"), job).unwrap();
    let out = tmp.path().join("out");
    let mut cmd = cn_run(&ws);
    cmd.arg(tmp.path().join("job.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let patch = fs::read_to_string(out.join("diff.patch")).unwrap();
    for path in ["d1/f5.txt", "d2/f6.txt", "d3/f7.txt"] {
        assert!(
            patch.contains(&format!("+++ b/{path}")),
            "{path} not in:\n{patch}"
        );
    }
    assert!(patch.contains("+hidden"), "{patch}");
}
