//! What a resume trusts: only what the first run trusted. The repository's instruction
//! files that shape the policy (`.continue/permissions.yaml` or the job's
//! `permissions.file`, `.continue/rules/*.md`) are kept in the run folder when a run
//! starts (`trusted.json`, which the file tools never write and commands cannot): as
//! their text for a trusted run, as the base commit's id for an untrusted one (so a
//! `main` moved meanwhile changes nothing). A resume builds its policy from that record,
//! never from the workspace the model has written since.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::start_error::RunError;
use crate::config::RunConfig;
use crate::permissions::Policy;
use crate::repo_files::RepoFiles;

/// Where the record is kept in the run folder.
const RECORD: &str = "trusted.json";

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
enum Record {
    Files {
        files: BTreeMap<String, String>,
    },
    Commit {
        repo: PathBuf,
        commit: String,
        prefix: PathBuf,
    },
    Nothing,
}

/// The policy, its repository files and a note: a new run's from the workspace (or base
/// commit), kept in `out_dir`; a resumed run's from what its first process kept.
pub(crate) fn enforced_policy(
    config: &RunConfig,
    workspace: &Path,
    out_dir: &Path,
    resumed: bool,
) -> Result<(Policy, RepoFiles, Option<String>), RunError> {
    if resumed && let Some(files) = load(out_dir) {
        return Ok(config.enforced_policy_with(workspace, files)?);
    }
    let (policy, files, note) = config.enforced_policy(workspace)?;
    if !resumed {
        let permissions = config.job.permissions.file.as_deref();
        let _ = keep(&files, permissions, out_dir);
    }
    Ok((policy, files, note))
}

fn keep(files: &RepoFiles, permissions: Option<&str>, out_dir: &Path) -> std::io::Result<()> {
    let record = match files {
        RepoFiles::Commit {
            repo,
            commit,
            prefix,
        } => Record::Commit {
            repo: repo.clone(),
            commit: commit.clone(),
            prefix: prefix.clone(),
        },
        RepoFiles::Nothing => Record::Nothing,
        RepoFiles::Workdir(_) | RepoFiles::Stored(_) => {
            let rel = permissions.unwrap_or(".continue/permissions.yaml");
            let mut kept: BTreeMap<String, String> = files
                .markdown_under(".continue/rules")
                .into_iter()
                .collect();
            if let Some(text) = files.read(rel) {
                kept.insert(rel.to_owned(), text);
            }
            Record::Files { files: kept }
        }
    };
    let text = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
    std::fs::write(out_dir.join(RECORD), text)
}

fn load(out_dir: &Path) -> Option<RepoFiles> {
    let text = std::fs::read(out_dir.join(RECORD)).ok()?;
    Some(match serde_json::from_slice(&text).ok()? {
        Record::Files { files } => RepoFiles::Stored(files),
        Record::Commit {
            repo,
            commit,
            prefix,
        } => RepoFiles::Commit {
            repo,
            commit,
            prefix,
        },
        Record::Nothing => RepoFiles::Nothing,
    })
}

/// A run resumed in another checkout (`resume_moved`): the untrusted base commit's
/// record names the repository it was read from; it now names `workspace`'s repository,
/// which must hold that same commit (the trust is the commit id, never the path).
pub(crate) fn reroot(out_dir: &Path, workspace: &Path) -> Result<(), String> {
    let Some(Ok(Record::Commit { commit, prefix, .. })) = std::fs::read(out_dir.join(RECORD))
        .ok()
        .map(|t| serde_json::from_slice::<Record>(&t))
    else {
        return Ok(());
    };
    let repo = git2::Repository::discover(workspace).map_err(|e| e.message().to_owned())?;
    let present = git2::Oid::from_str(&commit)
        .ok()
        .is_some_and(|id| repo.find_commit(id).is_ok());
    if !present {
        return Err(format!(
            "the untrusted run's base commit {commit} is not in this repository: fetch it first"
        ));
    }
    let top = repo
        .workdir()
        .and_then(|w| w.canonicalize().ok())
        .ok_or_else(|| "the repository has no working tree".to_owned())?;
    let record = Record::Commit {
        repo: top,
        commit,
        prefix,
    };
    let text = serde_json::to_vec(&record).map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join(RECORD), text).map_err(|e| e.to_string())
}
