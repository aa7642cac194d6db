//! `workspace: {path, copy: true}`: run in a fresh copy of a directory, made its own git
//! repository with one commit, so the original is never touched and the run's diff is
//! exactly what the agent changed.

use std::path::{Path, PathBuf};

/// Why the workspace could not be copied: the disk, permissions or git (exit 6).
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkspaceError {
    #[error("cannot copy the workspace: {}: {source}", .path.display())]
    Copy {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot copy the workspace: {0}")]
    Walk(#[from] ignore::Error),
    #[error("cannot make the workspace copy {} a git repository: {source}", .path.display())]
    Git { path: PathBuf, source: git2::Error },
}

fn copy_err(path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError {
    let path = path.to_path_buf();
    move |source| WorkspaceError::Copy { path, source }
}

/// Copy `src` to `dest` (respecting `.gitignore`, skipping `.git`, `.cn-run` and the run's
/// output folder holding `dest`, which `--out` may put inside `src`), then `git init` it
/// and commit everything.
pub(crate) fn copy_workspace(src: &Path, dest: &Path) -> Result<(), WorkspaceError> {
    std::fs::create_dir_all(dest).map_err(copy_err(dest))?;
    let src = src.canonicalize().map_err(copy_err(src))?;
    let dest = dest.canonicalize().map_err(copy_err(dest))?;
    let out_dir = dest.parent().unwrap_or(&dest).to_path_buf();
    let (src, dest) = (src.as_path(), dest.as_path());
    let walker = ignore::WalkBuilder::new(src)
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            name != ".git" && name != ".cn-run" && e.path() != out_dir
        })
        .build();
    for entry in walker {
        let entry = entry?;
        let Ok(rel) = entry.path().strip_prefix(src) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let target = dest.join(rel);
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_dir() {
            std::fs::create_dir_all(&target).map_err(copy_err(&target))?;
        } else if ft.is_symlink() {
            let link = std::fs::read_link(entry.path()).map_err(copy_err(entry.path()))?;
            std::os::unix::fs::symlink(link, &target).map_err(copy_err(&target))?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(copy_err(&target))?;
        }
    }
    init_repo(dest).map_err(|source| WorkspaceError::Git {
        path: dest.to_path_buf(),
        source,
    })
}

fn init_repo(dir: &Path) -> Result<(), git2::Error> {
    let repo = git2::Repository::init(dir)?;
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = git2::Signature::now("cn-run", "cn-run@localhost")?;
    repo.commit(Some("HEAD"), &sig, &sig, "workspace copy", &tree, &[])?;
    Ok(())
}
