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

/// Skills folders read at a run's start, relative to the workspace (with the job's own).
const SKILL_FOLDERS: &[&str] = &[".continue/skills", ".claude/skills"];

/// The record: where the policy's files come from, and the files the job names.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    #[serde(flatten)]
    source: Record,
    /// The job's rule files and output schema as the first run read them (`None` in
    /// records written before they were kept: those resumes read the disk).
    #[serde(default)]
    job_files: Option<BTreeMap<String, String>>,
}

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
    if resumed && let Some(files) = load(out_dir).map(|k| repo_files(k.source)) {
        return Ok(config.enforced_policy_with(workspace, files)?);
    }
    let (policy, files, note) = config.enforced_policy(workspace)?;
    if !resumed {
        let _ = keep(config, workspace, &files, out_dir);
    }
    Ok((policy, files, note))
}

/// The job's files as the run being resumed read them (see [`crate::job::LoadOptions`]).
pub(crate) fn kept_job_files(out_dir: &Path) -> Option<BTreeMap<String, String>> {
    load(out_dir)?.job_files
}

fn keep(
    config: &RunConfig,
    workspace: &Path,
    files: &RepoFiles,
    out_dir: &Path,
) -> std::io::Result<()> {
    let source = match files {
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
        RepoFiles::Workdir(_) | RepoFiles::Stored(_) => Record::Files {
            files: instruction_files(config, workspace, files),
        },
    };
    let record = Kept {
        source,
        job_files: Some(config.job().files_read.clone()),
    };
    let text = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
    crate::out_file::write_whole(&out_dir.join(RECORD), &[&text])
}

/// What a trusted run reads from its workspace to steer the model: the rules, the
/// permissions file, the agent file and the skills (their files' names, SKILL.md's text).
fn instruction_files(
    config: &RunConfig,
    workspace: &Path,
    files: &RepoFiles,
) -> BTreeMap<String, String> {
    let rel = config
        .job()
        .permissions
        .file
        .as_deref()
        .unwrap_or(".continue/permissions.yaml");
    let mut kept: BTreeMap<String, String> = files
        .markdown_under(".continue/rules")
        .into_iter()
        .collect();
    if let Some(text) = files.read(rel) {
        kept.insert(rel.to_owned(), text);
    }
    if let Some((name, text)) = crate::agent::system_prompt::agent_file(files) {
        kept.insert(name, text);
    }
    for dir in skill_folders(config, workspace) {
        kept.extend(skill_files(workspace, &dir));
    }
    kept
}

/// The skills folders inside the workspace, relative to it.
fn skill_folders(config: &RunConfig, workspace: &Path) -> Vec<String> {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let own = config.job().skills.iter().filter_map(|d| {
        let d = d.canonicalize().ok()?;
        let rel = d.strip_prefix(&ws).ok()?;
        Some(rel.to_string_lossy().into_owned())
    });
    SKILL_FOLDERS
        .iter()
        .map(|d| (*d).to_owned())
        .chain(own)
        .collect()
}

/// Every file under `rel` (no symlink followed): SKILL.md files with their text, the
/// others by name only (the Skills tool lists them; their bytes are the workspace's).
fn skill_files(workspace: &Path, rel: &str) -> Vec<(String, String)> {
    let root = workspace.join(rel);
    if rel.is_empty() || !root.is_dir() {
        return Vec::new();
    }
    ignore::WalkBuilder::new(&root)
        .standard_filters(false)
        .max_depth(Some(crate::skills::MAX_DEPTH + 2))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let path = e
                .path()
                .strip_prefix(workspace)
                .ok()?
                .to_string_lossy()
                .into_owned();
            let text = match e.file_name() == crate::skills::SKILL_FILE {
                true => std::fs::read_to_string(e.path()).ok()?,
                false => String::new(),
            };
            Some((path, text))
        })
        .collect()
}

fn load(out_dir: &Path) -> Option<Kept> {
    let text = std::fs::read(out_dir.join(RECORD)).ok()?;
    serde_json::from_slice(&text).ok()
}

fn repo_files(record: Record) -> RepoFiles {
    match record {
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
    }
}

/// A run resumed in another checkout (`resume_moved`): the untrusted base commit's
/// record names the repository it was read from; it now names `workspace`'s repository,
/// which must hold that same commit (the trust is the commit id, never the path). The
/// rest of the record (the job's files as first read) stays as it was.
pub(crate) fn reroot(out_dir: &Path, workspace: &Path) -> Result<(), String> {
    let Some(Kept {
        source: Record::Commit { commit, prefix, .. },
        job_files,
    }) = load(out_dir)
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
    let record = Kept {
        source: Record::Commit {
            repo: top,
            commit,
            prefix,
        },
        job_files,
    };
    let text = serde_json::to_vec(&record).map_err(|e| e.to_string())?;
    crate::out_file::write_whole(&out_dir.join(RECORD), &[&text]).map_err(|e| e.to_string())
}
