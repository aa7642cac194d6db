//! Opening a path one component at a time, each relative to the folder opened before it and
//! none through a symlink, so what cn-run checks is what it uses.
//!
//! cn-run's file tools and its checkpointer decide on a path (inside the workspace? hidden?
//! `.git`?) and then use it. Resolving the path again at use lets the model swap a folder
//! for a symlink in between and send the use elsewhere. Here the decision is made on the
//! real path (every symlink already resolved, so it holds none) and the use opens that path
//! component by component with `O_NOFOLLOW`: a symlink put anywhere on the way since the
//! check makes the use fail, it can never redirect it. The result is a descriptor, and
//! [`path_of`] reads back from the kernel where it really is, for a last check.
//!
//! Why not `openat2(RESOLVE_BENEATH)` or `cap-std`: both follow symlinks that stay beneath
//! the folder, and refuse absolute ones, so they would still need this check for the
//! hidden, `.git` and run-folder paths that lie beneath the workspace; `openat2` needs
//! Linux 5.6 and is refused by some container seccomp profiles, and cap-std falls back to
//! the same walk. A walk with `O_NOFOLLOW` is one rule everywhere, on every kernel, with
//! the `rustix` calls the crate already uses.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Flags every folder on the way is opened with: never through a symlink.
fn dir_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens folder `rel` (plain names only: no `.`, `..` or root) under `base`, no
/// component through a symlink; with `create`, missing folders are made on the way.
pub(crate) fn open_dir_under(base: &OwnedFd, rel: &Path, create: bool) -> std::io::Result<OwnedFd> {
    let mut fd = rustix::fs::openat(base, ".", dir_flags(), Mode::empty())?;
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(invalid(rel));
        };
        fd = open_step(&fd, name, create)?;
    }
    Ok(fd)
}

/// Opens absolute folder `abs` from `/`, no component through a symlink.
pub(crate) fn open_dir_abs(abs: &Path, create: bool) -> std::io::Result<OwnedFd> {
    let root = rustix::fs::openat(rustix::fs::CWD, "/", dir_flags(), Mode::empty())?;
    let rel = abs.strip_prefix("/").map_err(|_| invalid(abs))?;
    open_dir_under(&root, rel, create)
}

/// Opens folder `name` (one plain name) in `dir`, not through a symlink.
pub(crate) fn open_child_dir(dir: &OwnedFd, name: &OsStr) -> std::io::Result<OwnedFd> {
    open_step(dir, name, false)
}

fn open_step(dir: &OwnedFd, name: &OsStr, create: bool) -> std::io::Result<OwnedFd> {
    match rustix::fs::openat(dir, name, dir_flags(), Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::NOENT) if create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            Ok(rustix::fs::openat(dir, name, dir_flags(), Mode::empty())?)
        }
        Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) if is_link(dir, name) => {
            Err(symlink_error(name))
        }
        Err(e) => Err(e.into()),
    }
}

fn is_link(dir: &OwnedFd, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
}

/// The error of a use that met a symlink where the check saw none.
fn symlink_error(name: &OsStr) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is a symlink now (it changed after the path was checked); nothing was followed",
        name.to_string_lossy()
    ))
}

fn invalid(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{} is not a plain path", path.display()),
    )
}

/// Opens file `name` in `dir` without following a symlink and without blocking on a pipe;
/// `write` opens it for writing too (never creating it).
pub(crate) fn open_file(
    dir: &OwnedFd,
    name: &OsStr,
    write: bool,
) -> std::io::Result<std::fs::File> {
    let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
    let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        Err(rustix::io::Errno::LOOP) => Err(symlink_error(name)),
        Err(e) => Err(e.into()),
    }
}

/// Opens folder `name` in `dir` for reading its entries, not through a symlink.
pub(crate) fn open_listable(dir: &OwnedFd, name: &OsStr) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) if is_link(dir, name) => {
            Err(symlink_error(name))
        }
        Err(e) => Err(e.into()),
    }
}

/// Creates a new file `name` in `dir` (it must not exist), for writing.
pub(crate) fn create_new(dir: &OwnedFd, name: &OsStr) -> std::io::Result<std::fs::File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o666))?;
    Ok(std::fs::File::from(fd))
}

/// What `name` in `dir` is and its size, not following a symlink: `None` when it does
/// not exist.
pub(crate) fn kind_of(dir: &OwnedFd, name: &OsStr) -> std::io::Result<Option<(FileType, u64)>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some((
            FileType::from_raw_mode(st.st_mode),
            st.st_size as u64,
        ))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Renames `from` to `to`, both in `dir` (replacing `to`, never following it).
pub(crate) fn rename_in(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
    Ok(rustix::fs::renameat(dir, from, dir, to)?)
}

/// Removes file `name` from `dir` (best effort, for a temporary file).
pub(crate) fn remove_in(dir: &OwnedFd, name: &OsStr) {
    let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
}

/// The target of symlink `name` in `dir`.
pub(crate) fn read_link_in(dir: &OwnedFd, name: &OsStr) -> std::io::Result<Vec<u8>> {
    Ok(rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes())
}

/// Sets the permission bits of an open file.
pub(crate) fn set_mode(file: &impl AsFd, mode: u32) -> std::io::Result<()> {
    Ok(rustix::fs::fchmod(
        file,
        Mode::from_raw_mode(mode & 0o7777),
    )?)
}

/// Where the open descriptor `fd` really is, as the kernel says (`/proc/self/fd`).
pub(crate) fn path_of(fd: &impl AsRawFd) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// The names in an open folder (`.` and `..` left out), with their kinds when the file
/// system gives them.
pub(crate) fn entries(dir: &OwnedFd) -> std::io::Result<Vec<(std::ffi::OsString, FileType)>> {
    let listing = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(&listing)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name =
            std::ffi::OsString::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name));
        out.push((name, entry.file_type()));
    }
    Ok(out)
}

/// Writes `bytes` as `name` in `dir` through a temporary file in the same folder and a
/// rename, so a reader never sees half a file; `mode` (an existing file's) is kept.
pub(crate) fn replace_file(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let tmp = std::ffi::OsString::from(format!(".cn-run-{}", uuid::Uuid::new_v4().simple()));
    let written = (|| {
        let mut file = create_new(dir, &tmp)?;
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            set_mode(&file, mode)?;
        }
        file.sync_all()?;
        rename_in(dir, &tmp, name)
    })();
    if written.is_err() {
        remove_in(dir, &tmp);
    }
    written
}

/// Makes symlink `name` in `dir` pointing at `target`.
pub(crate) fn symlink_in(dir: &OwnedFd, name: &OsStr, target: &[u8]) -> std::io::Result<()> {
    let target = <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(target);
    Ok(rustix::fs::symlinkat(target, dir, name)?)
}

/// Makes folder `name` in `dir`.
pub(crate) fn mkdir_in(dir: &OwnedFd, name: &OsStr) -> std::io::Result<()> {
    Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755))?)
}

/// Removes `name` from `dir`, a folder with everything in it, never following a symlink.
pub(crate) fn remove_tree_in(dir: &OwnedFd, name: &OsStr) -> std::io::Result<()> {
    if let Some((FileType::Directory, _)) = kind_of(dir, name)? {
        let sub = open_dir_under(dir, Path::new(name), false)?;
        for (child, _) in entries(&sub)? {
            remove_tree_in(&sub, &child)?;
        }
        return Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?);
    }
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_on_the_way_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("ws/real")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("ws/link")).unwrap();
        let ws = open_dir_abs(&root.join("ws"), false).unwrap();
        assert!(open_dir_under(&ws, Path::new("real"), false).is_ok());
        let err = open_dir_under(&ws, Path::new("link"), false).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert!(open_dir_under(&ws, Path::new("link/new"), true).is_err());
        assert!(!root.join("outside/new").exists());
        assert!(open_dir_under(&ws, Path::new("../outside"), false).is_err());
        let made = open_dir_under(&ws, Path::new("real/a/b"), true).unwrap();
        assert_eq!(path_of(&made).unwrap(), root.join("ws/real/a/b"));
    }

    #[test]
    fn a_symlinked_file_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(root.join("secret"), root.join("alias")).unwrap();
        let fd = open_dir_abs(&root, false).unwrap();
        assert!(open_file(&fd, OsStr::new("alias"), false).is_err());
        assert!(open_file(&fd, OsStr::new("secret"), false).is_ok());
    }
}
