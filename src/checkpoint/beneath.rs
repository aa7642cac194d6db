//! A file's content into a snapshot through the descriptors that were checked: no window.
//!
//! libgit2's `Index::add_path` reads a file by its path. cn-run checked the folders on the
//! way through descriptors first, but between that check and libgit2's read a command
//! could swap a folder for a symlink out of the tree (into `~/.config/gh`), and the
//! token there went into a checkpoint and diff.patch. Here the file is opened beneath the
//! work tree one folder at a time, each without following a symlink (`crate::nofollow`),
//! the file itself with `O_NOFOLLOW`, and its stat data and bytes come from that one
//! descriptor; the blob is written from those bytes (with the filters `.gitattributes`
//! names for its path, as `add_path` applies them) and the index entry built from them.
//! A path beyond a symlink, or gone, is [`Added::Absent`]: not in the tree, as git says.
//! As root, a file a contained command could not read (another user's `0600` file, or one
//! inside another user's `0700` folder: contained commands hold no capability) is
//! [`Added::Unseen`], judged on the descriptors opened, and never read: its content would
//! otherwise land in `.git`, which commands can read (`tools::unseen`).

use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::{Index, IndexEntry, IndexTime, Repository};

/// What became of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    /// In the index now.
    Yes,
    /// No regular file or symlink there reachable without following a link.
    Absent,
    /// Closed to a contained command (cn-run runs as root): not read, not stored.
    Unseen,
}

/// Reads `rel` (repo-relative) beneath `root` through descriptors and puts it in `index`;
/// `Err` when it could not be read or stored.
pub(crate) fn add(
    repo: &Repository,
    index: &mut Index,
    root: &Path,
    rel: &Path,
) -> Result<Added, git2::Error> {
    let parent = rel.parent().unwrap_or(Path::new(""));
    let Some(name) = rel.file_name() else {
        return Ok(Added::Absent);
    };
    let root_only = rustix::process::geteuid().is_root();
    let Ok((dir, searchable)) = crate::nofollow::open_dir_abs(root, false)
        .and_then(|fd| open_parent(fd, parent, root_only))
    else {
        return Ok(Added::Absent);
    };
    if !searchable {
        return Ok(Added::Unseen);
    }
    use rustix::fs::FileType;
    let (id, meta) = match crate::nofollow::kind_of(&dir, name).map_err(|e| io(&e))? {
        Some((FileType::Symlink, _)) => {
            let target = crate::nofollow::read_link_in(&dir, name).map_err(|e| io(&e))?;
            let meta = link_meta(&dir, name).map_err(|e| io(&e))?;
            (repo.blob(&target)?, meta)
        }
        Some((FileType::RegularFile, _)) => {
            let mut file = crate::nofollow::open_file(&dir, name, false).map_err(|e| io(&e))?;
            let meta = file.metadata().map_err(|e| io(&e))?;
            if !meta.is_file() {
                return Ok(Added::Absent);
            }
            if root_only && !capless_root_may(&meta, 0o4) {
                return Ok(Added::Unseen);
            }
            let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
            file.read_to_end(&mut bytes).map_err(|e| io(&e))?;
            let mut writer = repo.blob_writer(Some(rel))?;
            writer.write_all(&bytes).map_err(|e| io(&e))?;
            (writer.commit()?, Stat::of(&meta))
        }
        _ => return Ok(Added::Absent),
    };
    let mode = entry_mode(repo, index, rel, &meta);
    index.add(&entry(rel, id, mode, &meta))?;
    Ok(Added::Yes)
}

/// The bytes of regular file `rel` beneath `root`, read through descriptors opened without
/// following a symlink; `None` when it is not there, not a regular file, or (cn-run runs as
/// root) closed to a contained command.
pub(super) fn read_seen(root: &Path, rel: &Path) -> Option<Vec<u8>> {
    let root_only = rustix::process::geteuid().is_root();
    let fd = crate::nofollow::open_dir_abs(root, false).ok()?;
    let (dir, searchable) = open_parent(fd, rel.parent()?, root_only).ok()?;
    let mut file = crate::nofollow::open_file(&dir, rel.file_name()?, false).ok()?;
    let meta = file.metadata().ok()?;
    let seen = searchable && meta.is_file() && (!root_only || capless_root_may(&meta, 0o4));
    let mut bytes = Vec::new();
    (seen && file.read_to_end(&mut bytes).is_ok()).then_some(bytes)
}

/// Opens the folders of `parent` beneath `root` one at a time, no symlink followed; with
/// `check`, whether root without capabilities may search each one (judged on the
/// descriptor opened, so a folder swapped in between cannot pass for another).
fn open_parent(root: OwnedFd, parent: &Path, check: bool) -> std::io::Result<(OwnedFd, bool)> {
    if !check {
        return Ok((crate::nofollow::open_dir_under(&root, parent, false)?, true));
    }
    let mut dir = root;
    for comp in parent.components() {
        let std::path::Component::Normal(name) = comp else {
            return Err(std::io::ErrorKind::InvalidInput.into());
        };
        dir = crate::nofollow::open_child_dir(&dir, name)?;
        let st = rustix::fs::fstat(&dir)?;
        if !crate::tools::unseen::capless_root_may(st.st_mode, st.st_uid, st.st_gid, 0o1) {
            return Ok((dir, false));
        }
    }
    Ok((dir, true))
}

fn capless_root_may(meta: &std::fs::Metadata, bits: u32) -> bool {
    crate::tools::unseen::capless_root_may(meta.mode(), meta.uid(), meta.gid(), bits)
}

/// The stat data an index entry keeps.
struct Stat {
    ctime: (i64, i64),
    mtime: (i64, i64),
    dev: u64,
    ino: u64,
    mode: u32,
    uid: u32,
    gid: u32,
    size: u64,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Stat {
        Stat {
            ctime: (m.ctime(), m.ctime_nsec()),
            mtime: (m.mtime(), m.mtime_nsec()),
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            uid: m.uid(),
            gid: m.gid(),
            size: m.size(),
        }
    }
}

/// A symlink's own stat data (not its target's).
fn link_meta(dir: &std::os::fd::OwnedFd, name: &OsStr) -> std::io::Result<Stat> {
    let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(Stat {
        ctime: (st.st_ctime, i64::try_from(st.st_ctime_nsec).unwrap_or(0)),
        mtime: (st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(0)),
        dev: st.st_dev,
        ino: st.st_ino,
        mode: st.st_mode,
        uid: st.st_uid,
        gid: st.st_gid,
        size: u64::try_from(st.st_size).unwrap_or(0),
    })
}

/// The git mode: a link, an executable or a plain file (with `core.fileMode` off, an
/// indexed file keeps the mode it had).
fn entry_mode(repo: &Repository, index: &Index, rel: &Path, meta: &Stat) -> u32 {
    if meta.mode & 0o170000 == 0o120000 {
        return 0o120000;
    }
    let trust_mode = repo
        .config()
        .and_then(|c| c.get_bool("core.fileMode"))
        .unwrap_or(true);
    if !trust_mode && let Some(old) = index.get_path(rel, 0) {
        return old.mode;
    }
    if meta.mode & 0o100 != 0 {
        0o100755
    } else {
        0o100644
    }
}

fn entry(rel: &Path, id: git2::Oid, mode: u32, s: &Stat) -> IndexEntry {
    let time = |(secs, nanos): (i64, i64)| {
        IndexTime::new(
            i32::try_from(secs).unwrap_or(i32::MAX),
            u32::try_from(nanos).unwrap_or(0),
        )
    };
    // The index keeps 32 bits of each (as git does: truncated).
    let low = |v: u64| (v & 0xffff_ffff) as u32;
    IndexEntry {
        ctime: time(s.ctime),
        mtime: time(s.mtime),
        dev: low(s.dev),
        ino: low(s.ino),
        mode,
        uid: s.uid,
        gid: s.gid,
        file_size: low(s.size),
        id,
        flags: 0,
        flags_extended: 0,
        path: std::os::unix::ffi::OsStrExt::as_bytes(rel.as_os_str()).to_vec(),
    }
}

fn io(e: &std::io::Error) -> git2::Error {
    git2::Error::from_str(&e.to_string())
}
