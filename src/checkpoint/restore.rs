//! Writing snapshot entries back into the working tree, and removing files, for rollback.
//!
//! Content is written exactly as stored in the snapshot (no git filters run), executable
//! bits follow the stored mode, and symlinks are recreated as symlinks. Parent folders are
//! created as needed, but never through a symlink, and every write or removal goes through
//! the descriptors of folders opened without following one (`crate::nofollow`): a folder
//! swapped for a link out of the tree makes the rollback stop there, never reach outside.

use std::io::ErrorKind;
use std::os::fd::OwnedFd;
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

/// Removes the file or symlink at `rel`, then any parent folders this left empty. The
/// folders are opened without following a symlink: a folder swapped for a link out of the
/// tree makes the removal fail, never reach outside.
pub(crate) fn remove(root: &Path, rel: &Path) -> Result<(), CheckpointError> {
    let path = join(root, rel)?;
    let (parent, name) = split(rel)?;
    let dirs = match open_chain(root, parent, false) {
        Ok(dirs) => dirs,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("open the folder of", &path)(e)),
    };
    let Some(dir) = dirs.last() else {
        return Ok(());
    };
    match rustix::fs::unlinkat(dir, name, rustix::fs::AtFlags::empty()) {
        Ok(()) => {}
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(io("remove", &path)(e.into())),
    }
    // Each folder on the way, from the deepest, while it is left empty.
    let names: Vec<&std::ffi::OsStr> = parent.iter().collect();
    for (holder, name) in dirs.iter().rev().skip(1).zip(names.iter().rev()) {
        if rustix::fs::unlinkat(holder, *name, rustix::fs::AtFlags::REMOVEDIR).is_err() {
            break;
        }
    }
    Ok(())
}

/// Writes `content` at `rel` as a regular file (executable or not) or a symlink. Folders
/// are opened (or made) without following a symlink; the file is written through its
/// folder's descriptor.
pub(crate) fn write(
    root: &Path,
    rel: &Path,
    mode: FileMode,
    content: &[u8],
) -> Result<(), CheckpointError> {
    let path = join(root, rel)?;
    let (parent, name) = split(rel)?;
    let dirs = open_chain(root, parent, true).map_err(|e| {
        if e.kind() == ErrorKind::NotADirectory || e.to_string().contains("symlink") {
            blocked(rel, &format!("a folder on the way is not a folder: {e}"))
        } else {
            io("create folders for", &path)(e)
        }
    })?;
    let Some(dir) = dirs.last() else {
        return Err(blocked(rel, "the path leaves the working tree"));
    };
    // A file that stays keeps its permissions but the executable bits, as git does.
    let kept = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        })
        .map_or(0o644, |st| st.st_mode & 0o7777);
    clear_target(dir, name, rel, &path, mode)?;
    if mode == FileMode::Link {
        return crate::nofollow::symlink_in(dir, name, content)
            .map_err(io("create symlink", &path));
    }
    let file_mode = if mode == FileMode::BlobExecutable {
        kept | ((kept & 0o444) >> 2)
    } else {
        kept & !0o111
    };
    crate::nofollow::replace_file(dir, name, content, Some(file_mode)).map_err(io("write", &path))
}

/// `rel`'s folder and name.
fn split(rel: &Path) -> Result<(&Path, &std::ffi::OsStr), CheckpointError> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(blocked(rel, "the path names no file")),
    }
}

/// The root and every folder down to `parent`, each opened from the one before without
/// following a symlink (made where missing when `create`).
fn open_chain(root: &Path, parent: &Path, create: bool) -> std::io::Result<Vec<OwnedFd>> {
    let mut dirs = vec![crate::nofollow::open_dir_abs(root, false)?];
    for part in parent.components() {
        let Some(last) = dirs.last() else { break };
        let next = crate::nofollow::open_dir_under(last, Path::new(part.as_os_str()), create)?;
        dirs.push(next);
    }
    Ok(dirs)
}

/// Makes room for `name` in `dir`: a symlink is removed (writing would follow it), as is
/// an empty folder or any file when a symlink goes there; a non-empty folder blocks.
fn clear_target(
    dir: &OwnedFd,
    name: &std::ffi::OsStr,
    rel: &Path,
    path: &Path,
    mode: FileMode,
) -> Result<(), CheckpointError> {
    use rustix::fs::{AtFlags, FileType};
    let kind = crate::nofollow::kind_of(dir, name).map_err(io("inspect", path))?;
    match kind.map(|(k, _)| k) {
        None => Ok(()),
        Some(FileType::Directory) => rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
            .map_err(|_| blocked(rel, "a folder that is not empty is in the way")),
        Some(FileType::Symlink) => rustix::fs::unlinkat(dir, name, AtFlags::empty())
            .map_err(|e| io("replace", path)(e.into())),
        Some(_) if mode == FileMode::Link => rustix::fs::unlinkat(dir, name, AtFlags::empty())
            .map_err(|e| io("replace", path)(e.into())),
        Some(_) => Ok(()),
    }
}

fn blocked(rel: &Path, reason: &str) -> CheckpointError {
    CheckpointError::Blocked {
        path: rel.to_string_lossy().into_owned(),
        reason: reason.to_string(),
    }
}
