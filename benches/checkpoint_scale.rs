//! Benchmark: checkpoints on a 100,000-file repository, beside git's own commands.
//!
//! Builds (in a temp dir, or `CN_RUN_BENCH_REPO` when set and already built) a repository
//! of 100,000 small files in 1,000 folders with one commit, then times, with the same
//! `GitCheckpointer` a run uses:
//! - the start snapshot;
//! - 10 Write-style checkpoints (one file changed, the checkpoint told which): target 20 ms;
//! - 10 Bash-style checkpoints (files changed and added, the checkpoint scans): target at
//!   most `git status`;
//! - a checkpoint after a 200 MB untracked artifact appears, and what it adds to `.git`
//!   and to the run's patch: targets < 1 s, < 1 MB, < 1 MB;
//!
//! beside `git status` and `git add -A && git write-tree` (into a scratch index) on the
//! same tree. `cargo bench -- checkpoint_scale` runs it (a few minutes, ~1 GB of disk).
//! `benches/checkpoint_run.sh` measures the same scenarios as whole runs of the release binary
//! (wall time with checkpoints on and off, `.git` growth, `diff.patch` size).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cn_run::checkpoint::{Checkpointer, GitCheckpointer};

const FOLDERS: usize = 1_000;
const FILES_PER_FOLDER: usize = 100;
const ARTIFACT_BYTES: usize = 200 << 20;

type BoxError = Box<dyn std::error::Error>;

pub(crate) fn run() {
    if let Err(e) = report(&mut io::stdout().lock()) {
        eprintln!("checkpoint_scale bench: {e}");
    }
}

fn report(out: &mut impl Write) -> Result<(), BoxError> {
    let tmp = tempfile::tempdir()?;
    let root = match std::env::var_os("CN_RUN_BENCH_REPO") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().join("repo"),
    };
    if !root.join(".git").exists() {
        build_repo(&root)?;
    }
    writeln!(
        out,
        "checkpoint_scale: {} files, one commit",
        FOLDERS * FILES_PER_FOLDER
    )?;
    let status = median_of(5, || time_git(&root, "git status --porcelain >/dev/null"))?;
    let add = median_of(3, || {
        time_git(
            &root,
            "cp .git/index .git/bench-index && GIT_INDEX_FILE=.git/bench-index git add -A && GIT_INDEX_FILE=.git/bench-index git write-tree >/dev/null",
        )
    })?;
    writeln!(
        out,
        "  git status:                         {:>9.1} ms",
        ms(status)
    )?;
    writeln!(
        out,
        "  git add -A && git write-tree:       {:>9.1} ms",
        ms(add)
    )?;

    let run_id = format!("scale-{}", std::process::id());
    let started = Instant::now();
    let cp = GitCheckpointer::start(&root, &run_id, &[])??;
    writeln!(
        out,
        "  start snapshot:                     {:>9.1} ms",
        ms(started.elapsed())
    )?;

    let mut writes = Vec::new();
    for i in 0..10 {
        let d = i * 37 % FOLDERS;
        let rel = format!("pkg{:02}/mod{d:03}/file{i:03}.txt", d / 100);
        let path = root.join(&rel);
        fs::write(&path, format!("edited {i} in {run_id}\n"))?;
        let t = Instant::now();
        cp.checkpoint_paths(&format!("Write {rel}"), &[path])?
            .ok_or("a Write made no checkpoint")?;
        writes.push(t.elapsed());
    }
    let mut bashes = Vec::new();
    for i in 0..10 {
        let dir = root.join(format!("pkg05/mod{:03}", 500 + i));
        fs::write(dir.join("file000.txt"), format!("bash {i} in {run_id}\n"))?;
        fs::write(dir.join(format!("new{i}-{run_id}.txt")), "new\n")?;
        let t = Instant::now();
        cp.checkpoint("Bash")?
            .ok_or("a Bash change made no checkpoint")?;
        bashes.push(t.elapsed());
    }
    let t = Instant::now();
    let nothing = cp.checkpoint("Bash")?;
    let idle = t.elapsed();
    writeln!(
        out,
        "  Write checkpoint (median of 10):    {:>9.1} ms  (max {:.1})",
        ms(median(&mut writes)),
        ms(*writes.iter().max().unwrap_or(&Duration::ZERO))
    )?;
    writeln!(
        out,
        "  Bash checkpoint (median of 10):     {:>9.1} ms  (max {:.1})",
        ms(median(&mut bashes)),
        ms(*bashes.iter().max().unwrap_or(&Duration::ZERO))
    )?;
    writeln!(
        out,
        "  Bash checkpoint, nothing changed:   {:>9.1} ms  (made one: {})",
        ms(idle),
        nothing.is_some()
    )?;

    let git_before = du(&root.join(".git"))?;
    let big = root.join("target/big.bin");
    fs::create_dir_all(big.parent().ok_or("no parent")?)?;
    fs::write(&big, pseudo_random(ARTIFACT_BYTES))?;
    let t = Instant::now();
    let made = cp.checkpoint("Bash make artifact")?;
    let artifact = t.elapsed();
    let t = Instant::now();
    let (patch, _) = cp.diff_since_start()?;
    let diff = t.elapsed();
    let git_after = du(&root.join(".git"))?;
    let _ = made;
    let skipped = cp.skipped();
    writeln!(
        out,
        "  checkpoint after a 200 MB artifact: {:>9.1} ms  (skipped: {:?})",
        ms(artifact),
        skipped
            .iter()
            .map(|s| (&s.path, s.bytes))
            .collect::<Vec<_>>()
    )?;
    writeln!(
        out,
        "  diff since start:                   {:>9.1} ms  ({} bytes of patch)",
        ms(diff),
        patch.len()
    )?;
    writeln!(
        out,
        "  .git grew by:                       {:>9} bytes over the whole run",
        git_after.saturating_sub(git_before)
    )?;
    fs::remove_file(&big)?;
    Ok(())
}

fn build_repo(root: &Path) -> Result<(), BoxError> {
    for d in 0..FOLDERS {
        let dir = root.join(format!("pkg{:02}/mod{d:03}", d / 100));
        fs::create_dir_all(&dir)?;
        for f in 0..FILES_PER_FOLDER {
            fs::write(
                dir.join(format!("file{f:03}.txt")),
                format!("line {d} {f}\n").repeat(5),
            )?;
        }
    }
    time_git(
        root,
        "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm start",
    )?;
    Ok(())
}

/// Runs `script` in `dir` with git's safety config; how long it took.
fn time_git(dir: &Path, script: &str) -> Result<Duration, BoxError> {
    let t = Instant::now();
    let status = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()?;
    if !status.success() {
        return Err(format!("{script}: {status}").into());
    }
    Ok(t.elapsed())
}

fn median_of(
    n: usize,
    mut f: impl FnMut() -> Result<Duration, BoxError>,
) -> Result<Duration, BoxError> {
    let mut all = (0..n).map(|_| f()).collect::<Result<Vec<_>, _>>()?;
    Ok(median(&mut all))
}

fn median(all: &mut [Duration]) -> Duration {
    all.sort();
    all.get(all.len() / 2).copied().unwrap_or_default()
}

fn du(dir: &Path) -> Result<u64, BoxError> {
    let out = Command::new("du").args(["-sb"]).arg(dir).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.split_whitespace().next().unwrap_or("0").parse()?)
}

/// Bytes that do not compress (as a build artifact's would not).
fn pseudo_random(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
