//! Benchmark: a checkpoint of a 10,000-file repository where one file changed must take
//! under 100 ms.
//!
//! Builds a repository with 10,000 small files in 100 folders and one commit (its index
//! written a moment after the files, as a real checkout's is), starts a checkpointer,
//! then times `checkpoint()` after changing one file, `checkpoint()` when nothing
//! changed (the cost every read-only Bash call pays), and `diff_since_start()`. Reports
//! medians of several runs.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use cn_run::checkpoint::{Checkpointer, GitCheckpointer};

const FOLDERS: usize = 100;
const FILES_PER_FOLDER: usize = 100;
const RUNS: usize = 11;

type BoxError = Box<dyn std::error::Error>;

/// Runs the benchmark and prints its figures to stdout.
pub(crate) fn run() {
    if let Err(e) = report(&mut io::stdout().lock()) {
        eprintln!("checkpoint bench: {e}");
    }
}

fn report(out: &mut impl Write) -> Result<(), BoxError> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    let files = build_repo(root)?;
    writeln!(out, "checkpoint: repository of {files} files, one commit")?;

    let started = Instant::now();
    // The inner error is the reason there is no repository to snapshot.
    let cp = GitCheckpointer::start(root, "bench", &[])??;
    writeln!(
        out,
        "  start (snapshot 0):             {:>8.2} ms",
        ms(started.elapsed())
    )?;

    let changed = median(|round| {
        let path = root.join("dir042/file0042.txt");
        fs::write(&path, format!("edited in round {round}\n"))?;
        let started = Instant::now();
        let made = cp.checkpoint("Edit dir042/file0042.txt")?;
        let elapsed = started.elapsed();
        if made.is_none() {
            return Err("a changed file did not produce a checkpoint".into());
        }
        Ok(elapsed)
    })?;
    writeln!(
        out,
        "  checkpoint, one file changed:  {:>8.2} ms  (median of {RUNS})",
        ms(changed)
    )?;

    let unchanged = median(|_| {
        let started = Instant::now();
        let made = cp.checkpoint("Bash")?;
        let elapsed = started.elapsed();
        if made.is_some() {
            return Err("an unchanged tree produced a checkpoint".into());
        }
        Ok(elapsed)
    })?;
    writeln!(
        out,
        "  checkpoint, nothing changed:   {:>8.2} ms  (median of {RUNS})",
        ms(unchanged)
    )?;

    let diff = median(|_| {
        let started = Instant::now();
        let (patch, stat) = cp.diff_since_start()?;
        let elapsed = started.elapsed();
        if stat.files != 1 || patch.is_empty() {
            return Err(format!("unexpected diff: {stat:?}").into());
        }
        Ok(elapsed)
    })?;
    writeln!(
        out,
        "  diff_since_start:              {:>8.2} ms  (median of {RUNS})",
        ms(diff)
    )?;
    let verdict = if changed < Duration::from_millis(100) {
        "met"
    } else {
        "MISSED"
    };
    writeln!(out, "  bar (one-file checkpoint < 100 ms): {verdict}")?;
    Ok(())
}

/// Median of `RUNS` timings from `step` (called with the round number).
fn median(mut step: impl FnMut(usize) -> Result<Duration, BoxError>) -> Result<Duration, BoxError> {
    let mut times = Vec::with_capacity(RUNS);
    for round in 0..RUNS {
        times.push(step(round)?);
    }
    times.sort();
    Ok(times[RUNS / 2])
}

/// Writes the files, commits them with git2 and writes `.git/index`; returns the count.
fn build_repo(root: &Path) -> Result<usize, BoxError> {
    let repo = git2::Repository::init(root)?;
    for d in 0..FOLDERS {
        let folder = root.join(format!("dir{d:03}"));
        fs::create_dir(&folder)?;
        for f in 0..FILES_PER_FOLDER {
            let body = format!("folder {d} file {f}\n{}\n", "some content line\n".repeat(8));
            fs::write(folder.join(format!("file{f:04}.txt")), body)?;
        }
    }
    fs::write(root.join(".gitignore"), "*.log\ntarget/\n")?;
    // A real index is written after the files it describes; keep them out of the same tick.
    std::thread::sleep(Duration::from_millis(50));
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let who = git2::Signature::now("bench", "bench@example.com")?;
    repo.commit(Some("HEAD"), &who, &who, "initial", &tree, &[])?;
    Ok(index.len())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
