//! Build artifacts stay out of the checkpoints, through the binary: an untracked file over
//! `git.max_file_size` and an untracked folder over `git.max_dir_files`, made by Bash, by
//! a background job, by a check, nested and with spaces and non-ASCII names, growing past
//! the limit between two checkpoints or deleted later — each listed in the checkpoint
//! event and result.json `skipped`, named in diff.patch without its content, not stored
//! in `.git`, and left alone by rollback. Binary files are binary changes in diff.patch,
//! their content only under `git.binary_patch`.
#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use std::path::{Path, PathBuf};

use crate::support::runner::{Run, cn_run, git, git_init, git_objects_bytes, run, write_files};

/// The job's limits: files over 4 KB, folders of more than 20 files.
const LIMITS: &str = "git: {max_file_size: 4KB, max_dir_files: 20}";

/// 40,000 bytes of base64 random text (over the file limit) at `path`, quoted for sh.
fn big_file(path: &str) -> String {
    format!("head -c 30000 /dev/urandom | base64 -w0 > \"{path}\"")
}

/// 30 files of 2,000 bytes each (each under the file limit) in folder `dir`, quoted.
fn big_dir(dir: &str) -> String {
    format!(
        "mkdir -p \"{dir}\" && for i in $(seq 30); do (echo DIRCONTENT; head -c 1470 /dev/urandom | base64 -w0) > \"{dir}/p$i.js\"; done"
    )
}

/// One Bash call of a script, as YAML.
fn bash(command: &str) -> String {
    let quoted = command.replace('\'', "''");
    format!("  - tool_calls:\n      - {{name: Bash, arguments: {{command: '{quoted}'}}}}\n")
}

/// A Bash call started in the background, as YAML.
fn background(command: &str) -> String {
    let quoted = command.replace('\'', "''");
    format!(
        "  - tool_calls:\n      - {{name: Bash, arguments: {{command: '{quoted}', run_in_background: true}}}}\n"
    )
}

struct Ran {
    tmp_dir: tempfile::TempDir,
    ws: PathBuf,
    run: Run,
    patch: Vec<u8>,
    /// How much `.git/objects` grew over the run.
    growth: u64,
}

/// A committed workspace, a job with `extra` settings running `turns` (then "done"); the
/// run's outputs.
fn run_job(extra: &str, turns: &[String]) -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    write_files(&ws, &[("a.txt", "alpha\n"), ("bin/tracked.bin", "x")]);
    std::fs::write(ws.join("bin/tracked.bin"), [0u8, 1, 2, 0xff, 0, 9]).unwrap();
    git_init(&ws);
    let jobs = tmp.path().join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let script = format!("turns:\n{}  - text: done\n", turns.concat());
    std::fs::write(jobs.join("s.yaml"), script).unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: work\npermissions: {{mode: auto}}\n{extra}\n"
    );
    std::fs::write(jobs.join("job.yaml"), job).unwrap();
    let before = git_objects_bytes(&ws);
    let out = tmp.path().join("out");
    let mut cmd = cn_run(&ws);
    cmd.env("XDG_RUNTIME_DIR", tmp.path());
    cmd.arg(jobs.join("job.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let patch = std::fs::read(out.join("diff.patch")).unwrap_or_default();
    let growth = git_objects_bytes(&ws).saturating_sub(before);
    Ran {
        tmp_dir: tmp,
        ws,
        run: r,
        patch,
        growth,
    }
}

/// All bytes of the files under `path` (a file or a folder).
fn bytes_under(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| bytes_under(&e.path()))
            .sum()
    } else {
        std::fs::metadata(path).unwrap().len()
    }
}

/// Every file under `path` with its content, for a byte-for-byte comparison.
fn contents(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    if path.is_dir() {
        let mut all: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .filter_map(Result::ok)
            .flat_map(|e| contents(&e.path()))
            .collect();
        all.sort();
        all
    } else {
        vec![(path.to_path_buf(), std::fs::read(path).unwrap())]
    }
}

/// `cn-run rollback <run> -C ws` to the start.
fn roll_back(ran: &Ran) {
    let id = ran.run.result()["session_id"].as_str().unwrap().to_owned();
    let mut cmd = cn_run(&ran.ws);
    cmd.env("XDG_RUNTIME_DIR", ran.tmp_dir.path());
    cmd.args(["rollback", &id, "-C"]).arg(&ran.ws);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
}

/// `path` (a file or, when `dir`, a folder) was left out: in result.json `skipped` with
/// its size, in a checkpoint event when `in_event`, named in diff.patch without content,
/// in no snapshot tree, `.git` not grown by it, and rollback leaves it byte for byte.
fn assert_left_out(ran: &Ran, path: &str, dir: bool, in_event: bool) {
    let full = ran.ws.join(path);
    let size = bytes_under(&full);
    let result = ran.run.result();
    let entry = result["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in result.json skipped: {result}"))
        .clone();
    if dir {
        assert!(entry["files"].as_u64().unwrap() > 20, "{entry}");
    } else {
        assert_eq!(entry["bytes"].as_u64().unwrap(), size, "{entry}");
    }
    if in_event {
        let events = ran.run.events_of("checkpoint.created");
        let listed = events.iter().any(|e| {
            e["skipped"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["path"] == path))
        });
        assert!(listed, "{path} in no checkpoint event: {events:?}");
    }
    let patch = String::from_utf8_lossy(&ran.patch);
    assert!(
        patch.contains(&format!("  {path} (")),
        "{path} not named: {patch}"
    );
    let content = std::fs::read_to_string(first_file(&full)).unwrap();
    let sample = content
        .lines()
        .last()
        .unwrap()
        .get(..60)
        .unwrap()
        .to_owned();
    assert!(!patch.contains(&sample), "{path}'s content is in the patch");
    assert!(
        !patch.contains("DIRCONTENT"),
        "a skipped folder's content is in the patch"
    );
    assert!(ran.patch.len() < 4000, "patch of {} bytes", ran.patch.len());
    assert!(
        ran.growth < size / 2,
        ".git grew {} for {size} bytes left out",
        ran.growth
    );
    // No snapshot taken while it was too big holds it (one taken before it grew may).
    for c in result["checkpoints"].as_array().unwrap() {
        if !c["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["path"] == path)
        {
            continue;
        }
        let commit = c["commit"].as_str().unwrap();
        let files = git(&ran.ws, &["ls-tree", "-r", "--name-only", "-z", commit]);
        assert!(
            !files.split('\0').any(|f| f.starts_with(path)),
            "{c} holds {path}"
        );
    }
    let before = contents(&full);
    roll_back(ran);
    assert_eq!(contents(&full), before, "rollback changed {path}");
    assert!(
        !ran.ws.join("small.txt").exists(),
        "rollback left the run's small file"
    );
}

/// A file of `path` (itself, or the first found in the folder).
fn first_file(path: &Path) -> PathBuf {
    contents(path).remove(0).0
}

const SMALL: &str = "echo small > small.txt";

#[test]
fn a_big_file_made_by_bash_is_left_out() {
    let ran = run_job(
        LIMITS,
        &[bash(&format!("{} && {SMALL}", big_file("build.out")))],
    );
    assert_left_out(&ran, "build.out", false, true);
}

#[test]
fn a_big_file_nested_with_spaces_and_unicode_is_left_out() {
    let path = "out dir/ünï cødé/big file.txt";
    let cmd = format!(
        "mkdir -p \"out dir/ünï cødé\" && {} && {SMALL}",
        big_file(path)
    );
    let ran = run_job(LIMITS, &[bash(&cmd)]);
    assert_left_out(&ran, path, false, true);
}

#[test]
fn a_big_file_made_by_a_background_job_is_left_out() {
    let job = format!("{} && touch bg.done", big_file("target/bg.bin"));
    let wait = format!("for i in $(seq 100); do [ -e bg.done ] && break; sleep 0.1; done; {SMALL}");
    let ran = run_job(
        LIMITS,
        &[bash("mkdir -p target"), background(&job), bash(&wait)],
    );
    assert_left_out(&ran, "target/bg.bin", false, true);
}

#[test]
fn a_big_file_made_by_a_check_is_left_out() {
    let check = format!(
        "{LIMITS}\nchecks: [{{name: c, run: 'mkdir -p dist && {}'}}]",
        big_file("dist/bundle.js")
    );
    let ran = run_job(&check, &[bash(SMALL)]);
    assert_left_out(&ran, "dist/bundle.js", false, false);
}

/// Snapshotted while small, then it grows past the limit: out from then on.
#[test]
fn a_file_that_grows_past_the_limit_between_two_checkpoints_is_left_out() {
    let first = "head -c 1500 /dev/urandom | base64 -w0 > grow.log && echo one > one.txt";
    let second = format!("head -c 30000 /dev/urandom | base64 -w0 >> grow.log && {SMALL}");
    let ran = run_job(LIMITS, &[bash(first), bash(&second)]);
    assert_left_out(&ran, "grow.log", false, true);
}

/// Listed while it exists; once deleted, no longer in result.json nor the patch, and
/// rollback does not bring it back.
#[test]
fn a_big_file_deleted_later_is_listed_then_forgotten() {
    let first = format!("{} && echo one > one.txt", big_file("tmp.big"));
    let ran = run_job(
        LIMITS,
        &[bash(&first), bash(&format!("rm tmp.big && {SMALL}"))],
    );
    let events = ran.run.events_of("checkpoint.created");
    assert!(
        events.iter().any(|e| e["skipped"][0]["path"] == "tmp.big"),
        "{events:?}"
    );
    let result = ran.run.result();
    assert_eq!(result["skipped"], serde_json::json!([]), "{result}");
    assert!(!String::from_utf8_lossy(&ran.patch).contains("tmp.big"));
    assert!(ran.growth < 20_000, ".git grew {}", ran.growth);
    roll_back(&ran);
    assert!(!ran.ws.join("tmp.big").exists());
    assert!(!ran.ws.join("small.txt").exists() && !ran.ws.join("one.txt").exists());
}

#[test]
fn a_big_folder_made_by_bash_is_left_out() {
    let ran = run_job(
        LIMITS,
        &[bash(&format!("{} && {SMALL}", big_dir("node_modules")))],
    );
    assert_left_out(&ran, "node_modules", true, true);
}

/// The folder left out is the topmost new one, however deep its files lie.
#[test]
fn a_big_nested_folder_with_spaces_and_unicode_is_left_out() {
    let cmd = format!("{} && {SMALL}", big_dir("vendor cache/ça va/ünï"));
    let ran = run_job(LIMITS, &[bash(&cmd)]);
    assert_left_out(&ran, "vendor cache", true, true);
}

#[test]
fn a_big_folder_made_by_a_background_job_is_left_out() {
    let job = format!("{} && touch bg.done", big_dir("target/deps"));
    let wait = format!("for i in $(seq 100); do [ -e bg.done ] && break; sleep 0.1; done; {SMALL}");
    let ran = run_job(LIMITS, &[background(&job), bash(&wait)]);
    assert_left_out(&ran, "target", true, true);
}

#[test]
fn a_big_folder_made_by_a_check_is_left_out() {
    let check = format!(
        "{LIMITS}\nchecks: [{{name: c, run: '{}'}}]",
        big_dir(".cache/pip").replace('\'', "''")
    );
    let ran = run_job(&check, &[bash(SMALL)]);
    assert_left_out(&ran, ".cache", true, false);
}

/// Ten files snapshotted, then twenty more: the folder is out from then on.
#[test]
fn a_folder_that_grows_past_the_limit_between_two_checkpoints_is_left_out() {
    let first = "mkdir -p gen && for i in $(seq 10); do (echo DIRCONTENT; head -c 1470 /dev/urandom | base64 -w0) > gen/a$i.js; done";
    let ran = run_job(
        LIMITS,
        &[bash(first), bash(&format!("{} && {SMALL}", big_dir("gen")))],
    );
    assert_left_out(&ran, "gen", true, true);
}

#[test]
fn a_big_folder_deleted_later_is_listed_then_forgotten() {
    let first = format!("{} && echo one > one.txt", big_dir("out"));
    let ran = run_job(
        LIMITS,
        &[bash(&first), bash(&format!("rm -r out && {SMALL}"))],
    );
    let events = ran.run.events_of("checkpoint.created");
    assert!(
        events.iter().any(|e| e["skipped"][0]["path"] == "out"),
        "{events:?}"
    );
    assert_eq!(ran.run.result()["skipped"], serde_json::json!([]));
    assert!(!String::from_utf8_lossy(&ran.patch).contains("DIRCONTENT"));
    roll_back(&ran);
    assert!(!ran.ws.join("out").exists());
}

/// Five kinds of binary change: named as binary in diff.patch by default, with a `GIT
/// binary patch` under `git.binary_patch: true` that `git apply` turns into the same bytes.
#[test]
fn binary_changes_are_named_and_carried_only_under_the_option() {
    let cases = [
        ("printf 'P\\000N\\001G' > new.bin", "new.bin"),
        (
            "printf '\\000\\377changed' > bin/tracked.bin",
            "bin/tracked.bin",
        ),
        ("rm bin/tracked.bin", "bin/tracked.bin"),
        (
            "mkdir -p \"imgs/ünï dir\" && printf '\\000\\001\\002' > \"imgs/ünï dir/p.png\"",
            "p.png",
        ),
        (
            "chmod +x bin/tracked.bin && printf '\\000more' >> bin/tracked.bin",
            "bin/tracked.bin",
        ),
    ];
    for (command, name) in cases {
        let named = run_job(LIMITS, &[bash(command)]);
        let text = String::from_utf8_lossy(&named.patch);
        assert!(
            text.contains("Binary files") && text.contains(name),
            "{command}: {text}"
        );
        assert!(!text.contains("GIT binary patch"), "{command}: {text}");
        let full = run_job("git: {binary_patch: true}", &[bash(command)]);
        let text = String::from_utf8_lossy(&full.patch);
        assert!(text.contains("GIT binary patch"), "{command}: {text}");
        // Applied to a fresh clone of the start, the patch gives the run's bytes.
        let fresh = full.tmp_dir.path().join("fresh");
        git(
            full.tmp_dir.path(),
            &["clone", "-q", full.ws.to_str().unwrap(), "fresh"],
        );
        std::fs::write(fresh.join(".git/p.patch"), &full.patch).unwrap();
        git(&fresh, &["apply", ".git/p.patch"]);
        let status = git(&full.ws, &["status", "--porcelain", "-z"]);
        for entry in status.split('\0').filter(|e| e.len() > 3) {
            let path = &entry[3..];
            let (ours, theirs) = (full.ws.join(path), fresh.join(path));
            let read = |p: &Path| std::fs::read(p).ok();
            if !ours.is_dir() {
                assert_eq!(read(&ours), read(&theirs), "{command}: {path}");
            }
        }
    }
}
