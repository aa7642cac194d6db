//! cn-run's benchmarks, one binary: `cargo bench` runs them all; `cargo bench -- NAME`
//! runs the ones whose name contains NAME. Each prints its own figures (medians) to stdout.
//! Whole runs of the release binary are measured by the scripts beside them: `fleet.sh`
//! (parallel jobs), `checkpoint_run.sh` (checkpoints on a 100,000-file repository),
//! `copied_tree.sh` (the same size of tree with stale stat data), `session_turns.sh`
//! (the cost of a turn as a 300-turn history grows) and `turns.sh` (the first request and
//! the cost per turn, with and without containment, beside another build).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

mod checkpoint;
mod checkpoint_scale;
mod command_safety;
mod edit_match;
mod mcp_start;
mod request_body;
mod sandbox;
mod tokens;
mod worktree;

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let benches: [(&str, fn()); 9] = [
        // First: it measures building the tokenizer, which is a process-wide singleton.
        ("tokens", tokens::run),
        ("command_safety", command_safety::run),
        ("edit_match", edit_match::run),
        ("checkpoint", checkpoint::run),
        ("worktree", worktree::run),
        ("mcp_start", mcp_start::run),
        ("request_body", request_body::run),
        ("sandbox", sandbox::run),
        // Last, and only when asked by name: it builds a 100,000-file repository.
        ("checkpoint_scale", checkpoint_scale::run),
    ];
    for (name, run) in benches {
        let asked = filter.iter().any(|f| name.contains(f.as_str()));
        let by_default = name != "checkpoint_scale";
        if (filter.is_empty() && by_default) || asked {
            println!("== {name}");
            run();
        }
    }
}
