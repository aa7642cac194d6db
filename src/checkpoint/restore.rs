//! Writing snapshot entries back into the working tree, and removing files, for rollback.
//!
//! Content is written exactly as stored in the snapshot (no git filters run), executable
//! bits follow the stored mode, and symlinks are recreated as symlinks. Parent folders are
//! created as needed, but never through a symlink: a write must not land outside the tree.

use std::fs;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use git2::FileMode;

use super::error::{CheckpointError, io};

/// `root` joined with the repo-relative `rel`, refusing `..` and absolute parts.
pub(crate) fn join(root: &Path, rel: &Path) -> Result<PathBuf, CheckpointError> {
    let clean = rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !clean || rel.as_os_str().is_empty() {
        return Err(blocked(rel, "the path leaves the working tree"));
    }
    Ok(root.join(rel))
}

/// Removes the file or symlink at `rel`, then any parent folders this left empty.
pub(crate) fn remove(root: &Path, rel: &Path) -> Result<(), CheckpointError> {
    let path = join(root, rel)?;
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("remove", &path)(e)),
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Writes `content` at `rel` as a regular file (executable or not) or a symlink.
pub(crate) fn write(
    root: &Path,
    rel: &Path,
    mode: FileMode,
    content: &[u8],
) -> Result<(), CheckpointError> {
    let path = join(root, rel)?;
    make_parents(root, rel, &path)?;
    clear_target(rel, &path, mode)?;
    if mode == FileMode::Link {
        return write_link(&path, content);
    }
    fs::write(&path, content).map_err(io("write", &path))?;
    set_executable(&path, mode == FileMode::BlobExecutable)
}

/// Creates the folders above `path`, refusing to go through a symlink or a file.
fn make_parents(root: &Path, rel: &Path, path: &Path) -> Result<(), CheckpointError> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    let Ok(inside) = parent.strip_prefix(root) else {
        return Err(blocked(rel, "the path leaves the working tree"));
    };
    let mut dir = root.to_path_buf();
    for part in inside.components() {
        dir.push(part);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let what = format!("{} is not a folder", dir.display());
                return Err(blocked(rel, &what));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                fs::create_dir(&dir).map_err(io("create folder", &dir))?;
            }
            Err(e) => return Err(io("inspect", &dir)(e)),
        }
    }
    Ok(())
}

/// Makes room at `path`: a symlink is removed (writing would follow it), as is an empty
/// folder or any file when a symlink goes there; a non-empty folder blocks the restore.
fn clear_target(rel: &Path, path: &Path, mode: FileMode) -> Result<(), CheckpointError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("inspect", path)(e)),
    };
    if meta.is_dir() {
        return fs::remove_dir(path)
            .map_err(|_| blocked(rel, "a folder that is not empty is in the way"));
    }
    if meta.file_type().is_symlink() || mode == FileMode::Link {
        fs::remove_file(path).map_err(io("replace", path))?;
    }
    Ok(())
}

#[cfg(unix)]
fn write_link(path: &Path, target: &[u8]) -> Result<(), CheckpointError> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::OsStr::from_bytes(target);
    std::os::unix::fs::symlink(target, path).map_err(io("create symlink", path))
}

/// Without symlink support, git itself writes the link target as a plain file.
#[cfg(not(unix))]
fn write_link(path: &Path, target: &[u8]) -> Result<(), CheckpointError> {
    fs::write(path, target).map_err(io("write", path))
}

/// Sets or clears the executable bits, where the file is readable, as git does.
#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) -> Result<(), CheckpointError> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = fs::metadata(path)
        .map_err(io("inspect", path))?
        .permissions();
    let mode = perms.mode();
    let wanted = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    if wanted != mode {
        perms.set_mode(wanted);
        fs::set_permissions(path, perms).map_err(io("set permissions of", path))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _executable: bool) -> Result<(), CheckpointError> {
    Ok(())
}

fn blocked(rel: &Path, reason: &str) -> CheckpointError {
    CheckpointError::Blocked {
        path: rel.to_string_lossy().into_owned(),
        reason: reason.to_string(),
    }
}
