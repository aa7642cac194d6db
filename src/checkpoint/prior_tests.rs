//! Files captured before a tool writes them are in the start snapshot as they were, however
//! late the start snapshot's walk reads the tree; a resumed run whose start snapshot was
//! never committed takes the recorded captures.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use super::*;
use crate::checkpoint::{Checkpoints, GitCheckpointer, Limits, Settings};
use crate::test_git::{commit_files, git};

/// A committed repository (`old.txt`, `keep.txt`, an ignored `build/`) and a run folder.
fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(ws.join("build")).unwrap();
    commit_files(
        &ws,
        &[
            ("old.txt", "old\n"),
            ("keep.txt", "keep\n"),
            (".gitignore", "build/\nout/\n"),
        ],
    );
    let out = ws.join("out");
    std::fs::create_dir_all(&out).unwrap();
    (tmp, ws, out)
}

/// The paths a Write, an Edit and a Write into a new folder name, captured, then written.
fn capture_then_write(prior: &Prior, ws: &Path) -> Vec<PathBuf> {
    let paths = vec![
        ws.join("old.txt"),
        ws.join("new.txt"),
        ws.join("sub/deep.txt"),
        ws.join("build/ignored.txt"),
    ];
    std::fs::write(ws.join("build/ignored.txt"), "was ignored\n").unwrap();
    assert!(prior.capture(&paths), "every path can be captured");
    std::fs::write(ws.join("old.txt"), "changed\n").unwrap();
    std::fs::write(ws.join("new.txt"), "new\n").unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/deep.txt"), "deep\n").unwrap();
    std::fs::write(ws.join("build/ignored.txt"), "still ignored\n").unwrap();
    paths
}

fn files_at(ws: &Path, reference: &str) -> String {
    git(ws, &["ls-tree", "-r", "--name-only", reference])
}

fn prior_for(ws: &Path, out: &Path) -> Prior {
    let prior = Prior::default();
    prior.opened(&git2::Repository::open(ws).unwrap());
    prior.bind(out, Limits::default().max_file_bytes);
    prior
}

#[test]
fn files_written_before_the_start_walk_are_in_the_start_as_they_were() {
    let (_tmp, ws, out) = repo();
    let prior = prior_for(&ws, &out);
    let paths = capture_then_write(&prior, &ws);
    assert!(
        out.join(RECORD).exists(),
        "captures are recorded before the write"
    );
    // The walk comes after the writes: it reads the new contents.
    let git_cp = GitCheckpointer::start_adjusted(
        &ws,
        |_| Some(("r1".to_owned(), vec![out.clone()], Limits::default())),
        |snap, tree| snap.with_prior(tree, &prior.close()),
    )
    .unwrap()
    .unwrap();
    prior.committed();
    assert!(
        !out.join(RECORD).exists(),
        "the record goes once the start is committed"
    );
    let start = "refs/cn-run/r1/0";
    assert_eq!(git(&ws, &["show", &format!("{start}:old.txt")]), "old\n");
    let listed = files_at(&ws, start);
    assert_eq!(listed, ".gitignore\nkeep.txt\nold.txt\n", "{listed}");
    // The call's own checkpoint then has every change, and the diff too.
    let cp = git_cp.checkpoint_paths("Write", &paths).unwrap().unwrap();
    assert_eq!(cp.files_changed, 3, "{cp:?}");
    let (patch, stat) = git_cp.diff_since_start().unwrap();
    let patch = String::from_utf8(patch).unwrap();
    assert_eq!(stat.files, 3, "{patch}");
    assert!(patch.contains("+changed") && patch.contains("+new") && patch.contains("+deep"));
    assert!(!patch.contains("ignored"), "{patch}");
}

#[test]
fn a_capture_after_the_start_walk_is_refused() {
    let (_tmp, ws, out) = repo();
    let prior = prior_for(&ws, &out);
    assert!(prior.close().is_empty());
    assert!(
        !prior.capture(&[ws.join("old.txt")]),
        "too late for the start"
    );
    assert!(!out.join(RECORD).exists());
}

#[test]
fn what_cannot_be_captured_is_refused() {
    let (_tmp, ws, out) = repo();
    let unbound = Prior::default();
    unbound.opened(&git2::Repository::open(&ws).unwrap());
    assert!(
        !unbound.capture(&[ws.join("old.txt")]),
        "no run folder to record in"
    );
    let prior = Prior::default();
    prior.opened(&git2::Repository::open(&ws).unwrap());
    prior.bind(&out, 3);
    assert!(!prior.capture(&[ws.join("old.txt")]), "over the size limit");
    assert!(!prior.capture(&[ws.join(".git/config")]), "inside .git");
    assert!(!prior.capture(&[ws.join("build")]), "a folder");
}

#[test]
fn a_resumed_run_whose_start_was_never_committed_takes_the_recorded_captures() {
    let (_tmp, ws, out) = repo();
    let prior = prior_for(&ws, &out);
    capture_then_write(&prior, &ws);
    drop(prior); // killed before the start snapshot was committed
    let notify: crate::checkpoint::Notify = Arc::new(|_| {});
    let resumed = Checkpoints::resume(&ws, "r1", &out, Settings::default(), notify);
    let listed = resumed.list();
    assert_eq!(listed[0].index, 0, "{listed:?}");
    assert_eq!(git(&ws, &["show", "refs/cn-run/r1/0:old.txt"]), "old\n");
    assert!(!files_at(&ws, "refs/cn-run/r1/0").contains("new.txt"));
    let (patch, _) = resumed.diff().unwrap().unwrap();
    let patch = String::from_utf8(patch).unwrap();
    assert!(
        patch.contains("+changed") && patch.contains("+deep"),
        "{patch}"
    );
    assert!(!out.join(RECORD).exists());
}

/// The blob a capture stores is the one git would store for the file: the plain hash of
/// its bytes where no filter can apply (found without the index), and the filtered one
/// where `.gitattributes` asks for a conversion.
#[test]
fn a_capture_stores_the_blob_git_would_with_or_without_filters() {
    for attributes in [None, Some("*.txt text eol=lf\n")] {
        let (_tmp, ws, out) = repo();
        if let Some(rules) = attributes {
            std::fs::write(ws.join(".gitattributes"), rules).unwrap();
            git(&ws, &["add", ".gitattributes"]);
            git(&ws, &["commit", "-qm", "attributes"]);
        }
        std::fs::write(ws.join("old.txt"), "crlf\r\nline\r\n").unwrap();
        std::os::unix::fs::symlink("keep.txt", ws.join("link")).unwrap();
        let prior = prior_for(&ws, &out);
        assert!(prior.capture(&[ws.join("old.txt"), ws.join("link")]));
        let captured = prior.close();
        let blob_of = |rel: &str| {
            let c = captured.iter().find(|c| c.path == rel).unwrap();
            c.blob.clone().unwrap()
        };
        let expected = git(&ws, &["hash-object", "old.txt"]);
        assert_eq!(blob_of("old.txt"), expected.trim(), "{attributes:?}");
        let target = Command::new("sh")
            .args(["-c", "printf keep.txt | git hash-object --stdin"])
            .current_dir(&ws)
            .output()
            .unwrap();
        let target = String::from_utf8(target.stdout).unwrap();
        assert_eq!(blob_of("link"), target.trim(), "{attributes:?}");
        let stored = git(&ws, &["cat-file", "-p", &blob_of("old.txt")]);
        let converted = attributes.is_some();
        assert_eq!(
            stored.contains('\r'),
            !converted,
            "{attributes:?}: {stored:?}"
        );
    }
}
