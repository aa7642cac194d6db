//! The snapshotter's private copy of the index: where it lives and how it is made.
//!
//! In memory when there is a place for that (`$XDG_RUNTIME_DIR`, else `/dev/shm`) and the
//! index is small, else in the repository's git directory, else in the temp dir. On a
//! busy disk each create, rename and remove of the index waits for the file system's
//! journal (0.2-0.3 ms each, measured with other jobs writing). A large index (a huge
//! monorepo) stays on disk: a container's `/dev/shm` is 64 MB by default and a write
//! holds the index twice. The index's own modification time is what git's racily-clean
//! check compares, and every file system here stamps from the same clock.
//!
//! A place that cannot take the copy (full, read-only) is passed over for the next one,
//! and when none can, the error names each place and why: a full `/dev/shm` used to read
//! as libgit2's "index no longer exists" (it opened the half-written copy).

use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use git2::{Index, Oid, Repository};

use super::error::{CheckpointError, git};

/// Indexes up to this size may live in memory.
const IN_MEMORY_UP_TO: u64 = 8 << 20;

/// A private copy of `repo`'s index in a directory of its own, seeded from `.git/index`
/// (or from `head_tree` when that file is missing, unreadable or mid-merge).
pub(super) fn make(
    repo: &Repository,
    head_tree: Option<Oid>,
) -> Result<(tempfile::TempDir, Index), CheckpointError> {
    let original = repo.path().join("index");
    let index_len = fs::metadata(&original).map_or(0, |m| m.len());
    let mut tried = Vec::new();
    for place in places(repo.path(), index_len) {
        let made = tempfile::Builder::new()
            .prefix("cn-run-index-")
            .tempdir_in(&place);
        let dir = match made {
            Ok(dir) => dir,
            Err(e) => {
                tried.push(format!("{}: {e}", place.display()));
                continue;
            }
        };
        let private = dir.path().join("index");
        match copy_index(&original, &private) {
            Ok(Some(index)) => return Ok((dir, index)),
            Ok(None) => return Ok((dir, seeded_from_tree(repo, &private, head_tree)?)),
            Err(e) => tried.push(format!("{}: {e}", place.display())),
        }
    }
    Err(CheckpointError::PrivateIndex(tried.join("; ")))
}

/// Where a private index may go, best first.
fn places(git_dir: &Path, index_len: u64) -> Vec<PathBuf> {
    let in_memory = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/dev/shm")])
        .filter(|d| index_len <= IN_MEMORY_UP_TO && d.is_absolute() && d.is_dir());
    in_memory
        .chain([git_dir.to_path_buf(), std::env::temp_dir()])
        .collect()
}

/// Copies `.git/index` to `to`, keeping its mtime, and opens the copy. `Ok(None)` when the
/// original is missing or unusable (split index, conflicts), so the caller starts clean;
/// `Err` when the copy cannot be written (nothing is left of it).
fn copy_index(from: &Path, to: &Path) -> io::Result<Option<Index>> {
    let (Ok(modified), Ok(mut source)) = (
        fs::metadata(from).and_then(|m| m.modified()),
        fs::File::open(from),
    ) else {
        return Ok(None);
    };
    let mut copy = fs::File::create(to)?;
    let copied = copy_bytes(&mut source, &mut copy)
        .and_then(|whole| copy.set_modified(modified).map(|()| whole));
    drop(copy);
    match copied {
        Ok(true) => {}
        Ok(false) => {
            let _ = fs::remove_file(to);
            return Ok(None);
        }
        Err(e) => {
            let _ = fs::remove_file(to);
            return Err(e);
        }
    }
    match Index::open(to) {
        Ok(index) if !index.has_conflicts() => Ok(Some(index)),
        _ => {
            let _ = fs::remove_file(to);
            Ok(None)
        }
    }
}

/// Copies `from` into `to`: `Ok(false)` when `from` could not be read, `Err` when `to`
/// could not be written.
fn copy_bytes(from: &mut fs::File, to: &mut fs::File) -> io::Result<bool> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(_) => return Ok(false),
        };
        to.write_all(&buf[..n])?;
    }
    to.flush()?;
    Ok(true)
}

/// A private index at `path` holding `tree` (no stat data: the first snapshot reads
/// every file once).
fn seeded_from_tree(
    repo: &Repository,
    path: &Path,
    tree: Option<Oid>,
) -> Result<Index, CheckpointError> {
    let mut index = Index::open(path).map_err(git("create a private index"))?;
    if let Some(tree) = tree {
        let tree = repo.find_tree(tree).map_err(git("read the HEAD tree"))?;
        index.read_tree(&tree).map_err(git("load the HEAD tree"))?;
    }
    Ok(index)
}
