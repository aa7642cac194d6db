//! Where repository-provided instructions come from: the working tree, or — for runs on
//! untrusted input such as a pull request — a trusted base commit. Agent files
//! (AGENTS.md …), `.continue/rules/` and `.continue/permissions.yaml` steer the agent and
//! its policy, so a PR must not be able to rewrite them for its own run.

use std::path::{Path, PathBuf};

/// A source of repository files, relative to the workspace.
#[derive(Debug, Clone)]
pub enum RepoFiles {
    /// Files as they are in the workspace.
    Workdir(PathBuf),
    /// Files as they are in `commit` of the repository at `repo`, under `prefix` (the
    /// workspace's place in the repository).
    Commit {
        repo: PathBuf,
        commit: String,
        prefix: PathBuf,
    },
    /// No repository instructions at all (untrusted input and no trusted base commit).
    Nothing,
    /// The instruction files as the run read them at its start (relative path → text): what
    /// a resume reads, never the workspace the model wrote since.
    Stored(std::collections::BTreeMap<String, String>),
}

/// Why the repository files cannot be read at the base ref (`--untrusted --base-ref`): the
/// command line asks for what the workspace cannot give (exit 2, `ConfigError::BaseRef`).
#[derive(Debug, thiserror::Error)]
pub enum BaseRefError {
    #[error("no git repository: {0}")]
    NoRepository(#[source] git2::Error),
    #[error("cannot resolve base ref `{base_ref}`: {source}")]
    Resolve {
        base_ref: String,
        source: git2::Error,
    },
    #[error("a bare repository has no workspace")]
    Bare,
    #[error("cannot resolve {}: {source}", .path.display())]
    Path {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl RepoFiles {
    /// Read repository files from `base_ref` (a branch, tag or commit) of the repository
    /// that contains `workspace`. `Err` says why it cannot.
    pub fn at_ref(workspace: &Path, base_ref: &str) -> Result<RepoFiles, BaseRefError> {
        let repo = git2::Repository::discover(workspace).map_err(BaseRefError::NoRepository)?;
        let commit = repo
            .revparse_single(base_ref)
            .and_then(|o| o.peel_to_commit())
            .map_err(|source| BaseRefError::Resolve {
                base_ref: base_ref.to_owned(),
                source,
            })?;
        let real = |path: &Path| {
            path.canonicalize().map_err(|source| BaseRefError::Path {
                path: path.to_path_buf(),
                source,
            })
        };
        let top = real(repo.workdir().ok_or(BaseRefError::Bare)?)?;
        let ws = real(workspace)?;
        let prefix = ws
            .strip_prefix(&top)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok(RepoFiles::Commit {
            repo: top,
            commit: commit.id().to_string(),
            prefix,
        })
    }

    /// Where a file shows up in messages.
    pub fn describe(&self, rel: &str) -> String {
        match self {
            RepoFiles::Workdir(_) | RepoFiles::Nothing => rel.to_owned(),
            RepoFiles::Stored(_) => format!("{rel} (as at the run's start)"),
            RepoFiles::Commit { commit, .. } => {
                format!("{rel} (at {})", &commit[..commit.len().min(12)])
            }
        }
    }

    /// The text of `rel`, if it exists.
    pub fn read(&self, rel: &str) -> Option<String> {
        match self {
            RepoFiles::Workdir(ws) => std::fs::read_to_string(ws.join(rel)).ok(),
            RepoFiles::Commit {
                repo,
                commit,
                prefix,
            } => {
                let repo = git2::Repository::open(repo).ok()?;
                let tree = repo
                    .find_commit(git2::Oid::from_str(commit).ok()?)
                    .ok()?
                    .tree()
                    .ok()?;
                let entry = tree.get_path(&prefix.join(rel)).ok()?;
                let blob = entry.to_object(&repo).ok()?.peel_to_blob().ok()?;
                String::from_utf8(blob.content().to_vec()).ok()
            }
            RepoFiles::Nothing => None,
            RepoFiles::Stored(files) => files.get(rel).cloned(),
        }
    }

    /// The paths of the files under the folder `rel` of a commit or of the stored files
    /// (recursively, relative to the workspace, sorted); empty for the other sources, which
    /// have walks of their own.
    pub fn paths_under(&self, rel: &str) -> Vec<String> {
        if let RepoFiles::Stored(files) = self {
            return files
                .keys()
                .filter(|p| Path::new(p).starts_with(rel))
                .cloned()
                .collect();
        }
        let RepoFiles::Commit {
            repo,
            commit,
            prefix,
        } = self
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        walk_blobs(repo, commit, &prefix.join(rel), |_, path, _| {
            out.push(match rel {
                "" => path.to_owned(),
                _ => format!("{rel}/{path}"),
            });
        });
        out.sort();
        out
    }

    /// The top of the repository a commit is read from.
    pub fn repo_root(&self) -> Option<&Path> {
        match self {
            RepoFiles::Commit { repo, .. } => Some(repo),
            _ => None,
        }
    }

    /// Every `*.md` file under the folder `rel` (recursively), as (relative path, text),
    /// sorted by path.
    pub fn markdown_under(&self, rel: &str) -> Vec<(String, String)> {
        let mut out = match self {
            RepoFiles::Workdir(ws) => ignore::WalkBuilder::new(ws.join(rel))
                .standard_filters(false)
                .build()
                .filter_map(Result::ok)
                .map(ignore::DirEntry::into_path)
                .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
                .filter_map(|p| {
                    let text = std::fs::read_to_string(&p).ok()?;
                    Some((p.strip_prefix(ws).unwrap_or(&p).display().to_string(), text))
                })
                .collect(),
            RepoFiles::Commit {
                repo,
                commit,
                prefix,
            } => tree_markdown(repo, commit, &prefix.join(rel), rel),
            RepoFiles::Nothing => Vec::new(),
            RepoFiles::Stored(files) => files
                .iter()
                .filter(|(p, _)| p.ends_with(".md") && Path::new(p).starts_with(rel))
                .map(|(p, t)| (p.clone(), t.clone()))
                .collect(),
        };
        out.sort();
        out
    }
}

fn tree_markdown(repo: &Path, commit: &str, dir: &Path, rel: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk_blobs(repo, commit, dir, |repo, path, entry| {
        if path.ends_with(".md")
            && let Some(text) = entry
                .to_object(repo)
                .ok()
                .and_then(|o| o.peel_to_blob().ok())
                .and_then(|b| String::from_utf8(b.content().to_vec()).ok())
        {
            out.push((format!("{rel}/{path}"), text));
        }
    });
    out
}

/// Calls `visit` with every blob under `dir` of `commit` (its path relative to `dir`), read
/// in-process by libgit2: no git program runs, so nothing the repository configures does.
fn walk_blobs(
    repo: &Path,
    commit: &str,
    dir: &Path,
    mut visit: impl FnMut(&git2::Repository, &str, &git2::TreeEntry<'_>),
) {
    let Ok(repo) = git2::Repository::open(repo) else {
        return;
    };
    let Some(tree) = git2::Oid::from_str(commit)
        .ok()
        .and_then(|id| repo.find_commit(id).ok())
        .and_then(|c| c.tree().ok())
    else {
        return;
    };
    let Some(sub) = tree
        .get_path(dir)
        .ok()
        .and_then(|e| e.to_object(&repo).ok())
        .and_then(|o| o.peel_to_tree().ok())
    else {
        return;
    };
    let _ = sub.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            let name = entry.name().unwrap_or_default();
            visit(&repo, &format!("{root}{name}"), entry);
        }
        git2::TreeWalkResult::Ok
    });
}
