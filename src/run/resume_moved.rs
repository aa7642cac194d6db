//! Resume anywhere: `--resume` takes a run folder made on another machine or in another
//! checkout — a folder, its archive (`.tar.gz`, `.tgz`, `.tar`), or `STORE_URL/RUN_ID`,
//! downloaded first into a new local folder. When the workspace is not the one the run
//! recorded (`-C DIR`, else the recorded folder if it is there, else the current one), it
//! is checked to be the commit the run started at (`origin.json`) with the run's
//! diff.patch applied — a checkout still clean at that commit gets the diff written in —
//! or the resume refuses, saying what differs. Trust never rises by moving: the resumed
//! run keeps the first run's stored job text, policy files and untrusted base commit
//! (`resume_trust`); only the paths that named the old machine are re-rooted.

use std::path::{Path, PathBuf};

use super::origin;
use crate::checkpoint::{Adopted, CheckpointError, Moved, adopt};
use crate::exit_code::Status;
use crate::session::Session;
use crate::store::{RunStore, StoreError};

/// Why a run from elsewhere cannot be resumed here.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MoveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "a run folder {} is here already: resume that one (cn-run --resume {}) or give --out a new folder",
        .0.display(), .0.display()
    )]
    Exists(PathBuf),
    #[error(
        "`{0}` names no run: give STORE_URL/RUN_ID (e.g. s3://bucket/runs/20260101-120000-abcdef)"
    )]
    NoRunInUrl(String),
    #[error("run {run} cannot resume in {}: {why}", .workspace.display())]
    Workspace {
        run: String,
        workspace: PathBuf,
        why: String,
    },
    #[error("cannot check the workspace: {0}")]
    Git(#[from] CheckpointError),
}

impl MoveError {
    /// A store or a repository that cannot be read is the environment; the rest is the
    /// command line (the run named, the checkout given).
    pub(crate) fn status(&self) -> Status {
        match self {
            MoveError::Store(StoreError::Backend { .. } | StoreError::Local { .. })
            | MoveError::Git(_) => Status::InternalError,
            _ => Status::Invalid,
        }
    }
}

/// The local run folder `id` names: a store's run downloaded, an archive unpacked, or
/// `id` itself.
pub(crate) async fn locate(id: &str, out: Option<&Path>) -> Result<String, MoveError> {
    if crate::store::is_store_url(id) {
        let (url, run) =
            crate::store::split_run_url(id).ok_or_else(|| MoveError::NoRunInUrl(id.to_owned()))?;
        let store = RunStore::open(url)?;
        let dest = fresh_folder(out, run)?;
        let files = crate::store::download(&store, run, &dest).await?;
        eprintln!(
            "cn-run: run {run} from {url}: {files} files in {}",
            dest.display()
        );
        return Ok(dest.display().to_string());
    }
    let path = Path::new(id);
    if crate::store::is_archive(path) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = [".tar.gz", ".tgz", ".tar"]
            .iter()
            .find_map(|e| name.strip_suffix(e))
            .unwrap_or(&name)
            .to_owned();
        let dest = fresh_folder(out, &stem)?;
        return Ok(crate::store::unpack(path, &dest)?.display().to_string());
    }
    Ok(id.to_owned())
}

/// `--out`, else `.cn-run/NAME` (which ignores itself in git); it must not exist yet.
fn fresh_folder(out: Option<&Path>, name: &str) -> Result<PathBuf, MoveError> {
    let dest = match out {
        Some(out) => out.to_path_buf(),
        None => super::outputs::cn_run_root()
            .unwrap_or_else(|_| PathBuf::from(super::outputs::ROOT))
            .join(name),
    };
    if dest.exists() {
        return Err(MoveError::Exists(dest));
    }
    Ok(dest)
}

/// Re-root a run whose workspace is elsewhere now: check (or make) `asked` (`-C`, else
/// the recorded folder if it is there, else the current one) the run's, adopt its
/// checkpoints there, and point the session at it. The new workspace, absolute, for the
/// resume to run in; None when the workspace is the recorded one (nothing changes).
pub(crate) fn reroot(
    session_path: &Path,
    session: &mut Session,
    asked: Option<&Path>,
) -> Result<Option<PathBuf>, MoveError> {
    let out_dir = session_path.parent().unwrap_or(Path::new("."));
    let recorded = PathBuf::from(&session.workspace);
    let wanted = match asked {
        Some(w) => std::path::absolute(w).unwrap_or_else(|_| w.to_path_buf()),
        None if recorded.is_dir() => recorded.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let refuse = |why: String| MoveError::Workspace {
        run: session.session_id.clone(),
        workspace: wanted.clone(),
        why,
    };
    let target = wanted
        .canonicalize()
        .map_err(|e| refuse(format!("it is not a folder here ({e})")))?;
    // The same folder with the run's checkpoints (or a run outside git): as it was. The
    // same path in a new checkout (another pod's /workspace) is a move.
    let same_place = recorded.canonicalize().ok().as_ref() == Some(&target);
    // A run killed before its first checkpoint has none to find: as it was too.
    if same_place
        && (origin::load(out_dir).is_none()
            || has_run_refs(&target, &session.session_id)
            || last_checkpoint(out_dir).is_none())
    {
        return Ok(None);
    }

    let moved = moved_run(out_dir, &target, &session.session_id).map_err(&refuse)?;
    match adopt(
        &target,
        &[out_dir.to_path_buf()],
        &session.session_id,
        &moved,
    )? {
        Ok(Adopted::AlreadyThere) => {}
        Ok(Adopted::Applied { files }) => eprintln!(
            "cn-run: the run's diff.patch ({files} files) written into {}",
            target.display()
        ),
        Err(why) => return Err(refuse(why)),
    }
    super::resume_trust::reroot(out_dir, &target).map_err(&refuse)?;
    // The first machine's record of its .git means nothing here: this resume records
    // this checkout's .git when it starts, and puts it back when it ends.
    let _ = std::fs::remove_file(out_dir.join(crate::git_guard::RECORD));
    eprintln!(
        "cn-run: run {} re-rooted from {} to {}",
        session.session_id,
        recorded.display(),
        target.display()
    );
    session.workspace = target.display().to_string();
    Ok(Some(std::path::absolute(&target).unwrap_or(target)))
}

/// What the run folder says of where the run stood, checked against `target`'s place
/// in its repository.
fn moved_run(out_dir: &Path, target: &Path, run: &str) -> Result<Moved, String> {
    let Some(origin) = origin::load(out_dir) else {
        return Err(format!(
            "its folder has no {} (the run was not in a git repository with a commit), so \
             the workspace cannot be checked: resume it in its own workspace",
            origin::ORIGIN
        ));
    };
    if let Some(here) = origin::of(target)
        && here.prefix != origin.prefix
    {
        return Err(format!(
            "the run worked in `{}` of its repository, this folder is `{}`: give -C the folder that matches",
            show(&origin.prefix),
            show(&here.prefix)
        ));
    }
    let last_index = last_checkpoint(out_dir).unwrap_or(0);
    let patch = match std::fs::read(out_dir.join("diff.patch")) {
        Ok(p) => p,
        Err(_) if last_index == 0 => Vec::new(),
        Err(_) => {
            return Err(format!(
                "run {run} changed files but its folder has no diff.patch (a run killed before \
                 its end keeps its diff only in a run store): resume it where it ran, or from its store"
            ));
        }
    };
    Ok(Moved {
        commit: origin.commit,
        patch,
        last_index,
    })
}

/// Whether the repository of `workspace` holds the run's start checkpoint.
fn has_run_refs(workspace: &Path, run: &str) -> bool {
    git2::Repository::discover(workspace)
        .is_ok_and(|r| r.refname_to_id(&format!("refs/cn-run/{run}/0")).is_ok())
}

fn show(prefix: &str) -> &str {
    if prefix.is_empty() { "." } else { prefix }
}

/// The highest checkpoint index in the run's events (`None`: not even the start's).
fn last_checkpoint(out_dir: &Path) -> Option<u32> {
    crate::report::rebuild::read_events(&out_dir.join("events.jsonl"))
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match &e.event {
            crate::events::Event::CheckpointCreated { index, .. } => Some(*index),
            _ => None,
        })
        .max()
}
