//! Git checkpoints of the working tree, the run's diff, and rollback.
//!
//! After every mutating tool call the agent loop asks a [`Checkpointer`] for a snapshot.
//! [`GitCheckpointer`] stores each snapshot as a commit under a hidden reference,
//! `refs/cn-run/<run-id>/<n>`: snapshot 0 is the tree when the run started (its parent is
//! HEAD), and each later one is chained to the previous. Snapshots include untracked files,
//! respect `.gitignore`, keep symlinks and file modes, and never touch HEAD, the user's
//! index, branches, stash or the working tree (see `snapshot.rs` for how).
//!
//! [`GitCheckpointer::diff_since_start`] gives the patch of everything the run changed,
//! in git's format (binary files as git binary patches), which `git apply` applies to the
//! start state. [`rollback`] puts the working tree back to any snapshot of a run, and
//! [`list_runs`] lists the runs a repository has checkpoints for.
//!
//! Outside a git repository, or before the first commit, there is nothing to anchor
//! snapshots to: [`GitCheckpointer::start`] then returns the reason as a sentence and
//! the run goes on without checkpoints.

mod adopt;
mod beneath;
mod diff;
mod early;
mod error;
mod git;
mod grown;
mod prior;
mod private_index;
mod queue;
mod refresh;
mod rel_path;
mod restore;
mod rollback;
mod run;
mod scan;
mod snapshot;
mod stale;
mod storage;
mod touch;
mod watch;

pub use crate::events::{Checkpoint, Skipped};
pub use adopt::{Adopted, Moved, adopt};
pub use early::{Early, StatusOf};
pub use error::{CheckpointError, Unavailable};
pub use git::GitCheckpointer;
pub use queue::{Queue, Settled};
pub use rollback::{RollbackReport, list_runs, rollback};
pub use run::{Checkpoints, Notice, Notify, Settings};
pub use storage::{PruneReport, added_bytes, keep_newest, prune};

/// The seam the agent loop sees: snapshot after a call that may have changed files.
pub trait Checkpointer: Send + Sync {
    /// Snapshots the working tree if it changed since the last snapshot; `None` if it
    /// did not (so read-only Bash calls cost a directory walk and nothing more).
    fn checkpoint(&self, label: &str) -> Result<Option<Checkpoint>, CheckpointError>;
}

/// What is too big to snapshot: an untracked file over `max_file_bytes`, an untracked
/// folder with more than `max_dir_files` files (job settings `git.max_file_size` and
/// `git.max_dir_files`). Files tracked by git at the start are always snapshotted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_file_bytes: u64,
    pub max_dir_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 10 << 20,
            max_dir_files: 10_000,
        }
    }
}

/// Size of the run's diff: result.json's own type (one struct for both).
pub use crate::report::DiffStat;

/// Logs how long a step took (`CN_RUN_LOG=cn_run=debug`), in the form
/// `benches/checkpoint_run.sh` reads: `checkpoint-timing what=<step> us=<microseconds>`.
pub(crate) fn timing(what: &str, since: std::time::Instant) {
    let us = since.elapsed().as_micros() as u64;
    tracing::debug!(what = %what, us, "checkpoint-timing");
}

/// The namespace of every checkpoint reference.
const REF_ROOT: &str = "refs/cn-run/";
/// Commit-message trailer naming a path the run excluded from its snapshots.
const EXCLUDE_TRAILER: &str = "cn-run-exclude: ";

/// `refs/cn-run/<run-id>/<index>`.
fn reference_name(run_id: &str, index: u32) -> String {
    format!("{REF_ROOT}{run_id}/{index}")
}

/// Rejects run ids that would not make a single valid reference path component.
fn check_run_id(run_id: &str) -> Result<(), CheckpointError> {
    let valid = !run_id.is_empty()
        && !run_id.contains('/')
        && git2::Reference::is_valid_name(&reference_name(run_id, 0));
    if valid {
        Ok(())
    } else {
        Err(CheckpointError::InvalidRunId(run_id.to_string()))
    }
}

/// Commit-message trailers giving the size limits the run snapshotted with.
const MAX_FILE_TRAILER: &str = "cn-run-max-file-size: ";
const MAX_DIR_TRAILER: &str = "cn-run-max-dir-files: ";

/// The snapshot commit's message: a one-line summary, then trailers that `rollback`
/// and `resume` read back (which paths were excluded, the size limits).
fn commit_message(
    run_id: &str,
    index: u32,
    label: &str,
    exclude: &[String],
    limits: Option<Limits>,
) -> String {
    let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut message =
        format!("cn-run {run_id} checkpoint {index}: {label}\n\ncn-run-run: {run_id}\n");
    for path in exclude {
        message.push_str(&format!("{EXCLUDE_TRAILER}{path}\n"));
    }
    if let Some(l) = limits {
        message.push_str(&format!("{MAX_FILE_TRAILER}{}\n", l.max_file_bytes));
        message.push_str(&format!("{MAX_DIR_TRAILER}{}\n", l.max_dir_files));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let nanos = now.map_or(0, |d| d.as_nanos());
        message.push_str(&format!("{STARTED_TRAILER}{nanos}\n"));
    }
    message
}

/// Commit-message trailer of snapshot 0: when the run started, in nanoseconds since the
/// epoch (a commit's own time has a resolution of one second, too coarse to order runs
/// that start in the same second, as `git.keep` must).
const STARTED_TRAILER: &str = "cn-run-started-ns: ";

/// When the run whose snapshot 0 is `commit` started, in nanoseconds since the epoch:
/// the trailer, else the commit's time (snapshots of earlier versions).
fn started_nanos(commit: &git2::Commit<'_>) -> i128 {
    let message = String::from_utf8_lossy(commit.message_bytes());
    message
        .lines()
        .find_map(|l| l.strip_prefix(STARTED_TRAILER)?.parse().ok())
        .unwrap_or(i128::from(commit.time().seconds()) * 1_000_000_000)
}

/// The size limits recorded in a snapshot commit's message (the defaults where absent).
fn limits_in(message: &str) -> Limits {
    let mut limits = Limits::default();
    for line in message.lines() {
        if let Some(n) = line
            .strip_prefix(MAX_FILE_TRAILER)
            .and_then(|v| v.parse().ok())
        {
            limits.max_file_bytes = n;
        }
        if let Some(n) = line
            .strip_prefix(MAX_DIR_TRAILER)
            .and_then(|v| v.parse().ok())
        {
            limits.max_dir_files = n;
        }
    }
    limits
}

/// The size limits snapshot `commit` (a run's snapshot 0) was taken with.
fn recorded_limits(repo: &git2::Repository, commit: git2::Oid) -> Limits {
    repo.find_commit(commit)
        .map(|c| limits_in(&String::from_utf8_lossy(c.message_bytes())))
        .unwrap_or_default()
}

/// The excluded paths recorded in a snapshot commit's message.
fn excluded_paths(message: &str) -> Vec<String> {
    message
        .lines()
        .filter_map(|line| line.strip_prefix(EXCLUDE_TRAILER))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_must_fit_in_one_reference_component() {
        for good in ["run-1", "2025-06-01T10.00.00Z", "a_b"] {
            assert!(check_run_id(good).is_ok(), "{good}");
        }
        for bad in ["", "a/b", "a b", "x..y", "c:d", "end.lock", "q?"] {
            assert!(check_run_id(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn excluded_paths_survive_the_commit_message() {
        let exclude = vec![".cn-run/out".to_string(), "build/report dir".to_string()];
        let limits = Limits {
            max_file_bytes: 123,
            max_dir_files: 7,
        };
        let message = commit_message(
            "r1",
            0,
            "Edit a.rs\nwith a second line",
            &exclude,
            Some(limits),
        );
        assert!(message.starts_with("cn-run r1 checkpoint 0: Edit a.rs with a second line\n"));
        assert_eq!(excluded_paths(&message), exclude);
        assert_eq!(limits_in(&message), limits);
        let later = commit_message("r1", 3, "Bash", &[], None);
        assert!(excluded_paths(&later).is_empty());
        assert_eq!(limits_in(&later), Limits::default());
    }
}
