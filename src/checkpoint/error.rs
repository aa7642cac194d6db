//! The one error type of the checkpoint module, so callers can tell a missing checkpoint
//! (a user mistake on `cn-run rollback`) from a git or file-system failure.

use std::path::PathBuf;

/// Why a snapshot, diff, rollback or listing failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// libgit2 refused an operation; `action` says which one.
    #[error("git: cannot {action}: {source}")]
    Git {
        action: &'static str,
        #[source]
        source: git2::Error,
    },
    /// Reading or writing a file of the working tree failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The run id cannot be part of a git reference name.
    #[error("run id {0:?} cannot be used in a git reference name")]
    InvalidRunId(String),
    /// Checkpoints for this run id already exist; a new run needs a new id.
    #[error("checkpoints for run {0:?} already exist in this repository")]
    RunExists(String),
    /// Rollback or listing was asked for a workspace that is not in a usable git repository.
    #[error(transparent)]
    NoRepository(#[from] Unavailable),
    /// No checkpoint refs exist for this run id.
    #[error("no checkpoints for run {0:?} in this repository")]
    RunNotFound(String),
    /// The run exists but has no checkpoint with this number.
    #[error("run {run_id:?} has no checkpoint {index}; it has checkpoints 0 to {last}")]
    CheckpointNotFound {
        run_id: String,
        index: u32,
        last: u32,
    },
    /// Rollback cannot write a path because something that is not ours is in the way
    /// (a non-empty directory, or a symlinked parent directory).
    #[error("cannot restore {path}: {reason}")]
    Blocked { path: String, reason: String },
    /// The checkpoint worker failed unexpectedly (a bug); the run goes on without it.
    #[error("the checkpoint failed: {0}")]
    Failed(String),
    /// The repository's git directory cannot be written (a read-only mount, a full disk):
    /// what libgit2 says then names a symptom ("target OID doesn't exist").
    #[error(
        "the repository's git directory cannot be written ({}: {source}); cn-run keeps its checkpoints there", .path.display()
    )]
    GitDirUnwritable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// No place could hold the snapshotter's private copy of the index.
    #[error("cannot write a private copy of the index: {0}")]
    PrivateIndex(String),
}

impl CheckpointError {
    /// The outcome class of this failure for `cn-run rollback` and `sessions prune` (its exit
    /// code comes from `Status::exit_code`): a run, checkpoint or repository the command line
    /// names that is not there is exit 2; git, the files, something in the way, exit 6.
    pub fn status(&self) -> crate::exit_code::Status {
        use crate::exit_code::Status;
        match self {
            CheckpointError::InvalidRunId(_)
            | CheckpointError::NoRepository(_)
            | CheckpointError::RunNotFound(_)
            | CheckpointError::CheckpointNotFound { .. } => Status::Invalid,
            CheckpointError::Git { .. }
            | CheckpointError::Io { .. }
            | CheckpointError::RunExists(_)
            | CheckpointError::Blocked { .. }
            | CheckpointError::Failed(_)
            | CheckpointError::GitDirUnwritable { .. }
            | CheckpointError::PrivateIndex(_) => Status::InternalError,
        }
    }
}

/// Why there is nothing to snapshot into: not an error of the run, which says so once and
/// goes on without checkpoints (for `rollback` it is [`CheckpointError::NoRepository`]).
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("{} is not inside a git repository", .0.display())]
    NotARepository(PathBuf),
    #[error(
        "git refuses to open the repository at {} because another user owns it (add it to \
         git's safe.directory): {message}", .path.display()
    )]
    OwnedByOther { path: PathBuf, message: String },
    #[error("the repository at {} has no working tree", .0.display())]
    NoWorkingTree(PathBuf),
    #[error("the git repository at {} has no commit yet", .0.display())]
    NoCommit(PathBuf),
    /// The run stopped before its start snapshot (nothing was written).
    #[error("the run did not start")]
    NotStarted,
    /// A resumed run whose checkpoints are not in this repository.
    #[error("run {0} has no checkpoints in this repository")]
    NoCheckpoints(String),
}

/// A git failure with its cause, when the cause is that the git directory `git_dir`
/// cannot be written (its objects or refs: a read-only mount, a full disk); other errors
/// as they are.
pub(crate) fn explained(git_dir: &std::path::Path, e: CheckpointError) -> CheckpointError {
    if !matches!(e, CheckpointError::Git { .. }) {
        return e;
    }
    for sub in ["objects", "refs"] {
        let dir = git_dir.join(sub);
        let probe = tempfile::tempfile_in(&dir)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"cn-run"));
        if let Err(source) = probe {
            return CheckpointError::GitDirUnwritable { path: dir, source };
        }
    }
    e
}

/// Shorthand for wrapping a libgit2 error with the action that failed.
pub(crate) fn git(action: &'static str) -> impl FnOnce(git2::Error) -> CheckpointError {
    move |source| CheckpointError::Git { action, source }
}

/// Shorthand for wrapping an IO error with the action and path that failed.
pub(crate) fn io(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> CheckpointError {
    let path = path.to_path_buf();
    move |source| CheckpointError::Io {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant and its exit code; the `match` fails to compile when one is added.
    #[test]
    fn each_checkpoint_error_has_the_exit_code_of_its_class() {
        let git_error = git2::Error::from_str("broken");
        let cases = [
            (git("read a commit")(git_error), 6),
            (
                io("write", std::path::Path::new("/w/a"))(std::io::Error::other("full")),
                6,
            ),
            (CheckpointError::InvalidRunId("a/b".into()), 2),
            (CheckpointError::RunExists("r".into()), 6),
            (
                CheckpointError::NoRepository(Unavailable::NotARepository("/w".into())),
                2,
            ),
            (CheckpointError::RunNotFound("r".into()), 2),
            (
                CheckpointError::CheckpointNotFound {
                    run_id: "r".into(),
                    index: 9,
                    last: 2,
                },
                2,
            ),
            (
                CheckpointError::Blocked {
                    path: "a".into(),
                    reason: "in the way".into(),
                },
                6,
            ),
            (CheckpointError::Failed("bug".into()), 6),
            (
                CheckpointError::GitDirUnwritable {
                    path: "/w/.git/objects".into(),
                    source: std::io::Error::other("read-only"),
                },
                6,
            ),
            (CheckpointError::PrivateIndex("full".into()), 6),
        ];
        for (e, code) in &cases {
            match e {
                CheckpointError::Git { .. }
                | CheckpointError::Io { .. }
                | CheckpointError::InvalidRunId(_)
                | CheckpointError::RunExists(_)
                | CheckpointError::NoRepository(_)
                | CheckpointError::RunNotFound(_)
                | CheckpointError::CheckpointNotFound { .. }
                | CheckpointError::Blocked { .. }
                | CheckpointError::Failed(_)
                | CheckpointError::GitDirUnwritable { .. }
                | CheckpointError::PrivateIndex(_) => {}
            }
            assert_eq!(e.status().exit_code(), *code, "{e}");
        }
    }
}
