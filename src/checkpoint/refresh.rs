//! `git update-index --refresh` for the private index, where no filter can apply.
//!
//! In a fresh clone or copy every file's stat data differs from the index, so libgit2 must
//! hash every file to tell whether it changed — for the system prompt's git status and
//! again for the start snapshot. Before hashing a file it resolves the `text`/`eol`/`crlf`
//! and `ident` attributes anew, walking every `.gitattributes` up the path without a
//! cache: measured, ~85% of the cost of hashing a small file. When the repository has no
//! attribute source at all and `core.autocrlf` is off, no filter can change a file on its
//! way into git, so its blob id is the plain hash of its bytes. Here those ids are checked
//! directly; an unchanged file gets its fresh stat data, the index is saved (moving its
//! timestamp past the files', so none is "racily clean"), and status and snapshot then
//! read no file that did not change. Anything else (a changed file, a new mode, a symlink,
//! a conflict, an intent-to-add entry) is left for libgit2 to judge as before, and so is
//! an index that is mostly fresh (a few probes tell), where refreshing would only add a
//! stat of every file.
//!
//! Measured on 10,000 files (`GitCheckpointer::start`, median of 9): a copied tree 202 ms
//! without this, 126 ms with it; a clean repository 21.2 ms either way. Whole release runs
//! on a 100,000-file tree with every file touched (`benches/copied_tree.sh`, against the same
//! build without this call, alternated, 6 runs each, load 2.2–3.7, medians): the first
//! request after 893 ms instead of 2,030 ms; a run with one Write 1,665 ms instead of
//! 6,885 ms. It stays while it shows there (issue 19 item 5).

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, ObjectType, Oid, Repository};

/// Refreshes the stat data of the unchanged files in `index` (the repository's private
/// copy) and saves it. Returns how many entries were refreshed; 0 (nothing written) when
/// a filter could apply or nothing was stale.
pub(crate) fn refresh(repo: &Repository, index: &mut Index) -> usize {
    let Some(root) = repo.workdir() else {
        return 0;
    };
    if !mostly_stale(root, index) || filters_may_apply(repo, index, root) {
        return 0;
    }
    let mut fresh = Vec::new();
    for entry in index.iter() {
        if let Some(updated) = refreshed(root, entry) {
            fresh.push(updated);
        }
    }
    if fresh.is_empty() {
        return 0;
    }
    for entry in &fresh {
        if index.add(entry).is_err() {
            return 0;
        }
    }
    // The file is removed first so the write creates it rather than renaming over it:
    // on ext4 a rename over an existing file starts writing the new one out at once
    // (see out_file.rs), and this is on the way to the first request.
    if let Some(path) = index.path() {
        let _ = std::fs::remove_file(path);
    }
    match index.write() {
        Ok(()) => fresh.len(),
        Err(_) => 0,
    }
}

/// Whether the index looks stale as a whole (a copied or restored tree: most files' stat
/// data differs), judged from up to 16 entries spread over it. A repository where only a
/// few files changed is left to libgit2, which then hashes just those: refreshing it would
/// cost a stat of every file for nothing (+10 ms on 10,000 files, measured).
fn mostly_stale(root: &Path, index: &Index) -> bool {
    let len = index.len();
    let probes = len.min(16);
    let (mut checked, mut stale) = (0, 0);
    for k in 0..probes {
        let Some(entry) = index.get(k * len / probes) else {
            continue;
        };
        if let Some(differs) = stat_differs(root, &entry) {
            checked += 1;
            stale += usize::from(differs);
        }
    }
    checked > 0 && stale * 2 >= checked
}

/// Whether a regular file's stat data differs from its entry's; `None` for what is not
/// a regular file in the working tree.
fn stat_differs(root: &Path, entry: &IndexEntry) -> Option<bool> {
    file_of(root, entry).map(|(_, meta)| !same_stat(entry, &meta))
}

/// The path and metadata of `entry`'s file, when it is a regular file.
fn file_of(root: &Path, entry: &IndexEntry) -> Option<(PathBuf, std::fs::Metadata)> {
    let path = root.join(std::str::from_utf8(&entry.path).ok()?);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    meta.file_type().is_file().then_some((path, meta))
}

/// The fields libgit2 compares to trust an entry without reading its file. Not `dev`:
/// libgit2 neither compares it nor stores the device there (it writes `st_rdev`, 0 for a
/// file), so comparing it would find every index libgit2 wrote stale.
pub(crate) fn same_stat(entry: &IndexEntry, meta: &std::fs::Metadata) -> bool {
    entry.mtime == time(meta.mtime(), meta.mtime_nsec())
        && entry.ctime == time(meta.ctime(), meta.ctime_nsec())
        && entry.ino == meta.ino() as u32
        && entry.uid == meta.uid()
        && entry.gid == meta.gid()
        && u64::from(entry.file_size) == meta.len()
}

/// `entry` with the stat data of its file, when the file is a regular file of the same
/// mode and size whose bytes hash to the entry's id; `None` when libgit2 should decide.
fn refreshed(root: &Path, entry: IndexEntry) -> Option<IndexEntry> {
    // A conflict stage or assume-valid; intent-to-add or skip-worktree.
    const STAGE_OR_VALID: u16 = 0x3000 | 0x8000;
    const EXTENDED: u16 = (1 << 13) | (1 << 14);
    let regular = entry.mode == 0o100644 || entry.mode == 0o100755;
    if !regular || entry.flags & STAGE_OR_VALID != 0 || entry.flags_extended & EXTENDED != 0 {
        return None;
    }
    let (path, meta) = file_of(root, &entry)?;
    let executable = meta.mode() & 0o111 != 0;
    let same_kind =
        u64::from(entry.file_size) == meta.len() && executable == (entry.mode == 0o100755);
    if !same_kind || same_stat(&entry, &meta) {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    if Oid::hash_object(ObjectType::Blob, &bytes).ok()? != entry.id {
        return None;
    }
    Some(IndexEntry {
        ctime: time(meta.ctime(), meta.ctime_nsec()),
        mtime: time(meta.mtime(), meta.mtime_nsec()),
        ino: meta.ino() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        ..entry
    })
}

/// The index's 32-bit time fields (git truncates the same way).
fn time(seconds: i64, nanoseconds: i64) -> IndexTime {
    IndexTime::new(seconds as i32, nanoseconds as u32)
}

/// Whether any attribute file exists that libgit2 would read, or `core.autocrlf` asks
/// for conversion: then a file's blob id may differ from the hash of its bytes.
pub(super) fn filters_may_apply(repo: &Repository, index: &Index, root: &Path) -> bool {
    let autocrlf = repo
        .config()
        .ok()
        .and_then(|c| c.get_string("core.autocrlf").ok())
        .is_some_and(|v| {
            !matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0"
            )
        });
    if autocrlf {
        return true;
    }
    let mut dirs = BTreeSet::new();
    dirs.insert(Vec::new());
    for entry in index.iter() {
        let path = &entry.path;
        if path == b".gitattributes" || path.ends_with(b"/.gitattributes") {
            return true;
        }
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|&b| b == b'/') {
            if !dirs.insert(path[..slash].to_vec()) {
                break;
            }
            end = slash;
        }
    }
    let untracked_attributes = dirs.iter().any(|dir| {
        let dir = String::from_utf8_lossy(dir);
        root.join(&*dir).join(".gitattributes").exists()
    });
    untracked_attributes || other_attribute_files(repo).iter().any(|f| f.exists())
}

/// The attribute files outside the working tree: `$GIT_DIR/info/attributes`,
/// `core.attributesFile` (default `$XDG_CONFIG_HOME/git/attributes` or
/// `~/.config/git/attributes`) and the system's `/etc/gitattributes`.
fn other_attribute_files(repo: &Repository) -> Vec<PathBuf> {
    let mut files = vec![
        repo.path().join("info").join("attributes"),
        PathBuf::from("/etc/gitattributes"),
    ];
    if let Some(configured) = repo
        .config()
        .ok()
        .and_then(|c| c.get_path("core.attributesFile").ok())
    {
        files.push(configured)
    } else {
        if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            files.push(Path::new(&xdg).join("git").join("attributes"));
        }
        if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            files.push(
                Path::new(&home)
                    .join(".config")
                    .join("git")
                    .join("attributes"),
            );
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::{commit_all, commit_files, git};
    use std::process::Command;

    /// A committed repository, then a copy of it (fresh stat data everywhere, as in a new
    /// clone or CI checkout).
    fn copied_repo(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        commit_files(&src, files);
        let copy = tmp.path().join("copy");
        let status = Command::new("cp")
            .args(["-r", src.to_str().unwrap(), copy.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
        (tmp, copy)
    }

    /// Attribute files of this machine (outside the repository) turn refreshing off;
    /// the tests that expect refreshing then have nothing to check.
    fn machine_has_attribute_files(dir: &Path) -> bool {
        let repo = Repository::open(dir).unwrap();
        let outside = other_attribute_files(&repo);
        outside[1..].iter().any(|f| f.exists())
    }

    fn refreshed_count(dir: &Path) -> usize {
        let repo = Repository::open(dir).unwrap();
        let mut index = repo.index().unwrap();
        refresh(&repo, &mut index)
    }

    fn libgit2_status(dir: &Path) -> Vec<(String, git2::Status)> {
        let repo = Repository::open(dir).unwrap();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true);
        let statuses = repo.statuses(Some(&mut opts)).unwrap();
        statuses
            .iter()
            .map(|e| (e.path().unwrap().to_owned(), e.status()))
            .collect()
    }

    #[test]
    fn a_copied_tree_gets_fresh_stat_data_and_changed_files_still_show() {
        let (_tmp, dir) = copied_repo(&[
            ("a.txt", "alpha\n"),
            ("same-size.txt", "one\n"),
            ("run.sh", "echo hi\n"),
            ("deep/er/b.txt", "beta\n"),
        ]);
        // Changes refresh must not hide: same size, other bytes; a new mode; untracked.
        std::fs::write(dir.join("same-size.txt"), "two\n").unwrap();
        let run = dir.join("run.sh");
        let mut perm = std::fs::metadata(&run).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&run, perm).unwrap();
        std::fs::write(dir.join("new.txt"), "new\n").unwrap();
        if machine_has_attribute_files(&dir) {
            return;
        }
        let before = libgit2_status(&dir);
        assert_eq!(refreshed_count(&dir), 2, "a.txt and deep/er/b.txt");
        assert_eq!(libgit2_status(&dir), before);
        let porcelain = git(&dir, &["status", "--porcelain"]);
        assert_eq!(porcelain, " M run.sh\n M same-size.txt\n?? new.txt\n");
        // Nothing is stale any more: a second refresh has nothing to do.
        assert_eq!(refreshed_count(&dir), 0);
    }

    #[test]
    fn a_repository_with_fresh_stat_data_is_not_walked_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for i in 0..20 {
            std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
        }
        commit_all(dir);
        // A few files edited since: libgit2 hashes just those.
        std::fs::write(dir.join("f3.txt"), "changed\n").unwrap();
        std::fs::write(dir.join("f7.txt"), "7\n").unwrap();
        if machine_has_attribute_files(dir) {
            return;
        }
        assert_eq!(refreshed_count(dir), 0);
        let porcelain = git(dir, &["status", "--porcelain"]);
        assert_eq!(porcelain, " M f3.txt\n");
    }

    /// An index libgit2 wrote (no device number in it) with a few edits since is fresh.
    #[test]
    fn an_index_written_by_libgit2_is_not_taken_for_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let repo = Repository::init(dir).unwrap();
        for i in 0..20 {
            std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        std::fs::write(dir.join("f7.txt"), "7\n").unwrap();
        if machine_has_attribute_files(dir) {
            return;
        }
        assert_eq!(refreshed_count(dir), 0);
    }

    #[test]
    fn nothing_is_refreshed_when_an_attribute_file_could_filter() {
        let (_tmp, dir) = copied_repo(&[("a.txt", "alpha\n"), ("sub/b.txt", "beta\n")]);
        if machine_has_attribute_files(&dir) {
            return;
        }
        // An untracked .gitattributes in a folder of tracked files.
        std::fs::write(dir.join("sub/.gitattributes"), "* text=auto\n").unwrap();
        assert_eq!(refreshed_count(&dir), 0);
        std::fs::remove_file(dir.join("sub/.gitattributes")).unwrap();
        // $GIT_DIR/info/attributes.
        std::fs::create_dir_all(dir.join(".git/info")).unwrap();
        std::fs::write(dir.join(".git/info/attributes"), "* ident\n").unwrap();
        assert_eq!(refreshed_count(&dir), 0);
        std::fs::remove_file(dir.join(".git/info/attributes")).unwrap();
        // core.autocrlf converts line ends on the way in.
        git(&dir, &["config", "core.autocrlf", "input"]);
        assert_eq!(refreshed_count(&dir), 0);
        git(&dir, &["config", "core.autocrlf", "false"]);
        assert_eq!(refreshed_count(&dir), 2);
    }

    #[test]
    fn a_tracked_attribute_file_turns_it_off() {
        let (_tmp, dir) = copied_repo(&[
            ("a.txt", "alpha\r\n"),
            (".gitattributes", "*.txt text eol=lf\n"),
        ]);
        assert_eq!(refreshed_count(&dir), 0);
    }
}
