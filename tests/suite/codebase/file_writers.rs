//! One writer for the files cn-run writes whole (`out_file`: a temporary file, synced,
//! renamed into place, the folder synced) and one for its logs (`append_log`): no other
//! non-test code of the crate opens a file to write, but where it writes something that is
//! not a file of cn-run's (a kernel setting, a lock, GitHub's files) — each named here with
//! why. A new `fs::write` into a run folder fails this test.

use std::path::{Path, PathBuf};

use crate::support::runner::repo_root;

/// The files allowed to open files for writing themselves, and why.
const ALLOWED: &[(&str, &str)] = &[
    ("out_file.rs", "the writer of whole files"),
    (
        "append_log.rs",
        "the writer of the run's logs (continues one after its last line)",
    ),
    (
        "run/run_lock.rs",
        "the run folder's lock file (held, never written)",
    ),
    (
        "run/04_outputs.rs",
        "checks the run folder is writable (an unnamed file, gone at once)",
    ),
    (
        "checkpoint/error.rs",
        "checks a folder is writable (an unnamed file, gone at once)",
    ),
    (
        "checkpoint/private_index.rs",
        "a copy of git's index in the repository's own folder",
    ),
    ("worktree.rs", "git's worktree lock"),
    ("worktree_prune.rs", "git's worktree lock"),
    (
        "report/github.rs",
        "appends to GitHub's step files ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT)",
    ),
    (
        "schedule/state.rs",
        "the scheduler's state, outside any run folder",
    ),
    (
        "schedule/launch.rs",
        "a scheduled job's log, outside any run folder",
    ),
    ("sandbox/entry.rs", "kernel settings under /proc"),
    ("sandbox/cgroup.rs", "cgroup files"),
    ("sandbox/call.rs", "cgroup files"),
    ("sandbox/pid_bound.rs", "kernel settings under /proc"),
    ("sandbox/netns.rs", "the process's own /proc files"),
    (
        "tools/probe.rs",
        "the test-only Probe tool (compiled for tests only)",
    ),
    (
        "test_git.rs",
        "the unit tests' scratch repositories (compiled for tests only)",
    ),
];

const OPENERS: &[&str] = &[
    "fs::write(",
    "OpenOptions::new()",
    "tempfile_in(",
    "NamedTempFile",
    ".persist(",
];

/// The code of a file before its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let cut = ["#[cfg(test)]\nmod tests", "#[cfg(test)]\n#[path"]
        .iter()
        .filter_map(|m| text.find(m))
        .min();
    text[..cut.unwrap_or(text.len())].to_owned()
}

/// Whether `text` opens a file to write (`File::create`, not `WholeFile::create`).
fn opens(text: &str) -> bool {
    let creates = text.match_indices("File::create(").any(|(i, _)| {
        !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    });
    creates || OPENERS.iter().any(|o| text.contains(o))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem != "tests" && !stem.ends_with("_tests") {
                out.push(path);
            }
        }
    }
}

#[test]
fn only_the_two_writers_open_files_for_writing() {
    let src = repo_root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut writers: Vec<String> = files
        .iter()
        .filter(|p| opens(&code(p)))
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    writers.sort();
    let unexplained: Vec<&String> = writers
        .iter()
        .filter(|w| !ALLOWED.iter().any(|(f, _)| f == w))
        .collect();
    assert!(
        unexplained.is_empty(),
        "these files write files themselves: write through out_file::write_whole / WholeFile \
         (or append_log) instead: {unexplained:?}"
    );
    let stale: Vec<&str> = ALLOWED
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !writers.iter().any(|w| w == f))
        .collect();
    assert!(
        stale.is_empty(),
        "no longer write files themselves: {stale:?}"
    );
}

#[test]
fn the_scan_finds_a_write_it_is_not_told_of() {
    assert!(opens("let _ = std::fs::write(dir.join(\"x\"), b\"\");"));
    assert!(opens("let f = std::fs::File::create(&p)?;"));
    assert!(!opens("let f = crate::out_file::WholeFile::create(&p)?;"));
}
