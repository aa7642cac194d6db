//! A scan that has read every folder takes its candidates from the watch's events, not
//! from `lstat`ing the files; it stats again when told to or when the events are lost.

use std::path::{Path, PathBuf};

use crate::checkpoint::snapshot::Snapshotter;
use crate::test_git::commit_files;

fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap();
    commit_files(
        &ws,
        &[
            ("a.txt", "a\n"),
            ("src/lib.rs", "lib\n"),
            ("src/deep/mod.rs", "m\n"),
        ],
    );
    (tmp, ws)
}

fn snapshotter(ws: &Path, watched: bool) -> Snapshotter {
    let repo = git2::Repository::open(ws).unwrap();
    let head = repo.head().unwrap().peel_to_tree().unwrap().id();
    let mut snap = Snapshotter::new(repo, Some(head), Vec::new()).unwrap();
    if watched {
        snap.scan.watch_folders();
    }
    snap
}

#[test]
fn an_armed_scan_takes_the_events_and_stats_again_when_told() {
    let (_tmp, ws) = repo();
    let mut snap = snapshotter(&ws, true);
    let start = snap.tree().unwrap();
    assert!(
        !snap.scan.used_events(),
        "the first scan reads every folder"
    );
    std::fs::write(ws.join("src/deep/mod.rs"), "changed\n").unwrap();
    let changed = snap.tree().unwrap();
    assert_ne!(changed, start, "the event names the change");
    assert!(snap.scan.used_events());
    // A change whose events are taken away is not seen by a scan that trusts them: the
    // scan did not stat the file (it would have found it by its stat data).
    std::fs::write(ws.join("a.txt"), "a, changed unseen\n").unwrap();
    assert!(snap.scan.watch.as_mut().unwrap().drain().is_some());
    assert_eq!(snap.tree().unwrap(), changed);
    // Told to check, the scan stats every file and finds it.
    snap.scan.check_next();
    let checked = snap.tree().unwrap();
    assert_ne!(checked, changed);
    // The same change made without a watch is found by its stat data.
    let mut plain = snapshotter(&ws, false);
    assert_eq!(plain.tree().unwrap(), checked);
    assert!(!plain.scan.used_events());
}

#[test]
fn lost_events_make_the_next_scan_read_everything_and_rearm() {
    let (_tmp, ws) = repo();
    let mut snap = snapshotter(&ws, true);
    snap.tree().unwrap();
    // A watched folder removed: its watch is gone, so the events cannot be trusted.
    std::fs::remove_dir_all(ws.join("src/deep")).unwrap();
    std::fs::write(ws.join("a.txt"), "a, with the folder gone\n").unwrap();
    let used = snap.scan.used_events();
    let tree = snap.tree().unwrap();
    assert_eq!(snap.scan.used_events(), used, "this scan stat'ed");
    let mut plain = snapshotter(&ws, false);
    assert_eq!(plain.tree().unwrap(), tree);
    // Re-armed: the next change comes from the events again.
    std::fs::create_dir_all(ws.join("src/deep")).unwrap();
    std::fs::write(ws.join("src/deep/new.rs"), "new\n").unwrap();
    let tree = snap.tree().unwrap();
    assert!(snap.scan.used_events());
    let mut plain = snapshotter(&ws, false);
    assert_eq!(plain.tree().unwrap(), tree);
}
