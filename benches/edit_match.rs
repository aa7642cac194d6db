//! Benchmark: a whitespace-ignored edit in a large file must take linear time.
//!
//! Builds code-like files of 1, 5 and 10 MB with one function near the end whose text
//! the search only matches once whitespace is ignored, so the edit walks the whole
//! cascade (exact, case-insensitive with a full lowercased copy, then whitespace-ignored)
//! before it succeeds. Reports the median of several runs of `find_and_replace` per size,
//! for an ASCII file and for one with non-ASCII comments (which takes the slower,
//! character-by-character lowercasing path), plus the time per MB: flat means linear.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use cn_run::edit::{Strategy, find_and_replace};

const MB: usize = 1 << 20;
const RUNS: usize = 7;
const SEARCH: &str = "fn target_final(alpha:u32,beta:u32)->u32{let sum=alpha+beta;sum*2}";
const REPLACEMENT: &str = "fn target_final(alpha: u32, beta: u32) -> u32 {\n    alpha + beta\n}";

/// Runs the benchmark and prints one line per file size to stdout.
pub(crate) fn run() {
    if let Err(e) = report(&mut io::stdout().lock()) {
        eprintln!("edit_match bench: cannot write the report: {e}");
    }
}

fn report(out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "edit_match: whitespace-ignored find_and_replace, median of {RUNS} runs"
    )?;
    for (label, comment) in [("ascii", "// step"), ("non-ascii", "// 步骤 ✓ é")] {
        for size in [MB, 5 * MB, 10 * MB] {
            let content = build_file(size, comment);
            let median = time_edit(&content);
            let per_mb = median.as_secs_f64() * 1e3 / (content.len() as f64 / MB as f64);
            writeln!(
                out,
                "  {label:>9} {:>5.1} MB: {:>8.2} ms  ({per_mb:.2} ms/MB)",
                content.len() as f64 / MB as f64,
                median.as_secs_f64() * 1e3,
            )?;
        }
    }
    Ok(())
}

/// Median wall time of `RUNS` edits of `content`.
fn time_edit(content: &str) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let done = find_and_replace(black_box(content), SEARCH, REPLACEMENT, false, 0);
            let elapsed = started.elapsed();
            match done {
                Ok(r) if r.strategy == Strategy::WhitespaceIgnoredMatch => {}
                other => panic!("bench edit did not match as intended: {other:?}"),
            }
            elapsed
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

/// About `size` bytes of Rust-like code, the target function at ~95% of the file.
fn build_file(size: usize, comment: &str) -> String {
    let mut text = String::with_capacity(size + 512);
    let mut i = 0usize;
    let mut target_placed = false;
    while text.len() < size {
        if !target_placed && text.len() >= size / 20 * 19 {
            text.push_str("    fn target_final(alpha: u32, beta: u32) -> u32 {\n");
            text.push_str("        let sum = alpha + beta;\n        sum * 2\n    }\n\n");
            target_placed = true;
        }
        text.push_str(&format!(
            "    {comment} {i}\n    fn handler_{i}(input: &str, count: usize) -> Result<usize, Error> {{\n        let value = compute(input, count * {});\n        if value > {} {{\n            return Ok(value);\n        }}\n        Err(Error::new(\"failed {i}\"))\n    }}\n\n",
            i % 97,
            i % 1000,
        ));
        i += 1;
    }
    text
}
