//! What a run's checkpoints add to `.git` goes when its hidden refs go: `git.keep` at the
//! end of a run and `cn-run sessions prune` (by run, `--keep N`, or all) remove older runs'
//! refs AND the objects only they held, so `.git/objects` shrinks by what the runs added;
//! an object a user's commit still holds stays; packed objects go with git's own `gc`.
#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::runner::{cn_run, git, git_init, git_objects_bytes, run, write_files};

/// Each run writes 200,000 bytes of random data (incompressible, different every run).
const SCRIPT: &str = "turns:
  - tool_calls:
      - {name: Bash, arguments: {command: 'head -c 200000 /dev/urandom > data.bin'}}
  - text: done
";
const DATA: u64 = 200_000;

/// A committed workspace `ws` and `jobs/job.yaml` (its `git:` line is `git`).
fn workspace(git_line: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    write_files(&ws, &[("a.txt", "alpha\n")]);
    git_init(&ws);
    let jobs = tmp.path().join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::write(jobs.join("s.yaml"), SCRIPT).unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: work\npermissions: {{mode: auto}}\n{git_line}\n"
    );
    std::fs::write(jobs.join("job.yaml"), job).unwrap();
    (tmp, ws)
}

/// What one run left: its id and the blob its last snapshot holds for data.bin.
struct Made {
    id: String,
    blob: String,
    added: u64,
}

/// Runs the job once (run `n` of the test, its own `--out`), the data file then removed
/// from the working tree so the next run writes new content; what it left.
fn one_run(tmp: &Path, ws: &Path, n: usize) -> Made {
    let out = tmp.join(format!("out{n}"));
    let mut cmd = cn_run(ws);
    cmd.env("XDG_RUNTIME_DIR", tmp);
    cmd.arg(tmp.join("jobs/job.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    let last = result["checkpoints"].as_array().unwrap().last().unwrap()["commit"]
        .as_str()
        .unwrap()
        .to_owned();
    let blob = git(ws, &["rev-parse", &format!("{last}:data.bin")])
        .trim()
        .to_owned();
    std::fs::remove_file(ws.join("data.bin")).unwrap();
    Made {
        id: result["session_id"].as_str().unwrap().to_owned(),
        blob,
        added: result["git_added_bytes"].as_u64().unwrap(),
    }
}

/// Whether the repository holds object `oid` (loose or packed).
fn has_object(ws: &Path, oid: &str) -> bool {
    Command::new("git")
        .args(["cat-file", "-e", oid])
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success()
}

/// The runs with hidden refs in `ws`.
fn runs_with_refs(ws: &Path) -> Vec<String> {
    let refs = git(ws, &["for-each-ref", "--format=%(refname)", "refs/cn-run/"]);
    let mut runs: Vec<String> = refs
        .lines()
        .filter_map(|r| r.split('/').nth(2).map(str::to_owned))
        .collect();
    runs.dedup();
    runs
}

/// `cn-run sessions prune ARGS -C ws`: its JSON report.
fn prune(ws: &Path, args: &[&str]) -> serde_json::Value {
    let mut cmd = cn_run(ws);
    cmd.args(["sessions", "prune"]).args(args).arg("-C").arg(ws);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    serde_json::from_str(&r.stdout).unwrap()
}

/// `made` gone entirely (refs and data blob), what it freed at least its data.
fn assert_gone(ws: &Path, made: &Made) {
    assert!(!runs_with_refs(ws).contains(&made.id), "{} kept", made.id);
    assert!(!has_object(ws, &made.blob), "{}'s data blob kept", made.id);
}

fn assert_kept(ws: &Path, made: &Made) {
    assert!(runs_with_refs(ws).contains(&made.id), "{} removed", made.id);
    assert!(
        has_object(ws, &made.blob),
        "{}'s data blob removed",
        made.id
    );
}

/// `git.keep: N` (1, 2, 3) after four runs: the N newest keep their refs and objects, the
/// older ones lose both, and `.git/objects` is smaller by at least their data. Runs are
/// a fraction of a second each, so some start in the same second: the current run is
/// kept whatever its place in that order.
#[test]
fn git_keep_removes_older_runs_refs_and_objects() {
    for keep in [1usize, 2, 3] {
        let (tmp, ws) = workspace(&format!("git: {{keep: {keep}}}"));
        let mut made = Vec::new();
        let mut sizes = Vec::new();
        for n in 0..4 {
            let before = git_objects_bytes(&ws);
            made.push(one_run(tmp.path(), &ws, n));
            sizes.push((before, git_objects_bytes(&ws)));
            assert!(made[n].added >= DATA, "git_added_bytes {}", made[n].added);
            assert_kept(&ws, &made[n]);
        }
        let runs = runs_with_refs(&ws);
        assert_eq!(runs.len(), keep, "keep {keep}: {runs:?}");
        assert_kept(&ws, &made[3]);
        // The last run added its data and removed one older run's: .git did not grow by it.
        let (before, after) = sizes[3];
        assert!(
            after < before + DATA / 2,
            "keep {keep}: {before} -> {after}"
        );
        for m in &made[..4 - keep] {
            assert_gone(&ws, m);
        }
        git(&ws, &["fsck", "--no-dangling", "--connectivity-only"]);
    }
}

/// `cn-run sessions prune` three ways — one run by id, `--keep 1`, and all — each removes
/// the refs and data blobs of what it names and `.git/objects` shrinks by their data.
#[test]
fn sessions_prune_removes_refs_and_objects_by_id_by_keep_and_all() {
    let (tmp, ws) = workspace("");
    let made: Vec<Made> = (0..4).map(|n| one_run(tmp.path(), &ws, n)).collect();
    let start = git_objects_bytes(&ws);
    let report = prune(&ws, &[&made[1].id]);
    assert_gone(&ws, &made[1]);
    for m in [&made[0], &made[2], &made[3]] {
        assert_kept(&ws, m);
    }
    assert!(report["bytes_freed"].as_u64().unwrap() >= DATA, "{report}");
    let after_one = git_objects_bytes(&ws);
    assert!(after_one + DATA <= start, "{start} -> {after_one}");
    let report = prune(&ws, &["--keep", "1"]);
    assert_eq!(report["runs"].as_array().unwrap().len(), 2, "{report}");
    assert_gone(&ws, &made[0]);
    assert_gone(&ws, &made[2]);
    assert_kept(&ws, &made[3]);
    let after_keep = git_objects_bytes(&ws);
    assert!(
        after_keep + 2 * DATA <= after_one,
        "{after_one} -> {after_keep}"
    );
    prune(&ws, &[]);
    assert_gone(&ws, &made[3]);
    assert!(runs_with_refs(&ws).is_empty());
    assert!(git_objects_bytes(&ws) + DATA <= after_keep);
    git(&ws, &["fsck", "--no-dangling", "--connectivity-only"]);
}

/// A blob a snapshot wrote that the user then committed stays when the run is pruned (the
/// commit holds it); the user's history is whole.
#[test]
fn pruning_keeps_what_a_users_commit_holds() {
    let (tmp, ws) = workspace("");
    let made = one_run(tmp.path(), &ws, 0);
    git(
        &ws,
        &[
            "checkout",
            "-q",
            &format!("refs/cn-run/{}/1", made.id),
            "--",
            "data.bin",
        ],
    );
    git(&ws, &["add", "data.bin"]);
    git(&ws, &["commit", "-qm", "keep the data"]);
    let report = prune(&ws, &[]);
    assert_eq!(report["runs"].as_array().unwrap().len(), 1, "{report}");
    assert!(runs_with_refs(&ws).is_empty());
    assert!(
        has_object(&ws, &made.blob),
        "the committed blob was removed"
    );
    git(&ws, &["fsck", "--connectivity-only"]);
}

/// After the user's `git gc` packed the run's objects, pruning removes the refs and
/// says nothing it cannot do; git's own `gc --prune=now` then drops the objects.
#[test]
fn packed_objects_go_with_gits_gc_once_the_refs_are_gone() {
    let (tmp, ws) = workspace("");
    let made = one_run(tmp.path(), &ws, 0);
    git(&ws, &["gc", "-q"]);
    assert!(has_object(&ws, &made.blob));
    prune(&ws, &[&made.id]);
    assert!(runs_with_refs(&ws).is_empty());
    git(&ws, &["gc", "-q", "--prune=now"]);
    assert!(!has_object(&ws, &made.blob), "packed data kept after gc");
}

/// `git.keep: 1` over runs whose ids sort in any order within one second: each run,
/// right after it ends, still has its own refs and objects (five runs, each checked).
#[test]
fn git_keep_never_removes_the_run_that_just_ended() {
    let (tmp, ws) = workspace("git: {keep: 1}");
    for n in 0..5 {
        let m = one_run(tmp.path(), &ws, n);
        assert_eq!(runs_with_refs(&ws), vec![m.id.clone()], "run {n}");
        assert_kept(&ws, &m);
    }
}
