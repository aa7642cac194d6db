//! What MCP servers add to a whole run (issue bar: three stdio servers add no more than
//! their own start time plus 50 ms). Runs the release binary on a one-turn scripted job
//! with 0, 1 and 3 servers (the test fixture, `examples/mcp_fixture`, built here if
//! missing), with and without a start delay in the server, and compares medians.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROUNDS: usize = 15;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The fixture server next to the release binary, built on first use.
fn fixture(bin: &Path) -> PathBuf {
    let path = bin.parent().unwrap().join("examples/mcp_fixture");
    if !path.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "--release", "--example", "mcp_fixture"])
            .status()
            .unwrap()
            .success();
        assert!(ok && path.is_file(), "cannot build {}", path.display());
    }
    path
}

/// Median wall time (ms) of `cn-run job.yaml` with `servers` copies of the fixture.
fn run_ms(bin: &Path, server: &Path, servers: usize, delay_ms: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let mut job = String::from(
        "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: hi\n\
         git: {checkpoints: false}\n",
    );
    if servers > 0 {
        job.push_str("mcp_servers:\n");
        for i in 0..servers {
            job.push_str(&format!(
                "  s{i}:\n    command: {}\n    args: ['--delay', '{delay_ms}']\n",
                server.display()
            ));
        }
    }
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    std::fs::write(dir.path().join("s.yaml"), "turns:\n  - text: done\n").unwrap();
    let mut times = Vec::new();
    for round in 0..=ROUNDS {
        let start = Instant::now();
        let out = Command::new(bin)
            .args(["--quiet", "--out"])
            .arg(dir.path().join(format!("out{round}")))
            .arg("job.yaml")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if round > 0 {
            times.push(ms); // round 0 warms the page cache
        }
    }
    median(times)
}

pub(crate) fn run() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cn-run"));
    let server = fixture(&bin);
    println!("mcp: one-turn scripted run, medians of {ROUNDS}");
    for delay in [0, 200] {
        let none = run_ms(&bin, &server, 0, delay);
        let one = run_ms(&bin, &server, 1, delay);
        let three = run_ms(&bin, &server, 3, delay);
        let own = one - none;
        let added = three - none;
        println!(
            "  server start delay {delay:>3} ms: no server {none:.1} ms, one {one:.1} ms \
             (its own start: {own:.1} ms), three {three:.1} ms (added {added:.1} ms, \
             {:.1} ms beyond one server's start)",
            added - own
        );
        let verdict = if added <= own + 50.0 {
            "met"
        } else {
            "NOT met"
        };
        println!("  bar (three add ≤ own start + 50 ms): {verdict}");
    }
}
