//! Snapshots of the working tree as git trees, through a private index.
//!
//! `git add -A` into the user's index would be the obvious way to snapshot, and it is
//! forbidden: the user's index, HEAD and branches must not change. So each snapshotter
//! owns a copy of `.git/index` in a private temporary directory and installs it as the
//! index of its own `Repository` handle. Adding everything to that copy respects
//! `.gitignore`, keeps symlinks and file modes, and reuses the stat data git already
//! cached: files whose size, times and inode are unchanged are not read again, so a
//! snapshot of a large tree where one file changed costs a directory walk plus one hash.
//! The copy keeps the original's modification time, so git's "racily clean" check (a
//! file changed within the same clock tick as the index was written) still applies.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

use git2::{ErrorCode, Oid, Repository};

use super::error::{CheckpointError, Unavailable, git, io};
use super::scan::{Context, Scan};
use super::{Limits, Skipped};

/// A repository handle whose index is a private copy, plus the paths never to snapshot,
/// the size limits, and what the scan keeps between snapshots.
pub(crate) struct Snapshotter {
    pub(super) repo: Repository,
    /// Repo-relative, `/`-separated prefixes that are skipped (the run's own outputs).
    pub(super) exclude: Vec<String>,
    pub(super) limits: Limits,
    pub(super) scan: Scan,
    /// Paths in the index when the snapshotter was made: tracked, never left out for size
    /// (sorted, so whether a folder holds any is a range look-up).
    pub(super) tracked: BTreeSet<Vec<u8>>,
    /// Folders newly left out whose files the private index held: removed from the tree
    /// by the next [`apply`](Self::apply).
    pub(super) dropped_dirs: Vec<String>,
    /// Untracked files left out for their size → their size.
    pub(super) skipped_files: BTreeMap<String, u64>,
    /// Files that could not be read → why (the snapshot keeps what it had of them).
    pub(super) unreadable: BTreeMap<String, String>,
    /// Files a contained command could not read (cn-run runs as root), left out unnamed.
    pub(super) unseen: BTreeSet<String>,
    /// The tree the private index holds now; `None` before the first snapshot.
    pub(super) current: Option<Oid>,
    /// The paths the last update of `current` replaced (see `touch.rs`).
    pub(super) updated: Option<super::touch::Updated>,
    /// Holds the private index file; removed when the snapshotter is dropped.
    _dir: tempfile::TempDir,
}

impl Snapshotter {
    /// Takes over `repo` and gives it a private copy of its index, seeded from
    /// `.git/index` (or from `head_tree` when that file is missing, unreadable or
    /// mid-merge).
    pub(crate) fn new(
        repo: Repository,
        head_tree: Option<Oid>,
        exclude: Vec<String>,
    ) -> Result<Self, CheckpointError> {
        let (dir, mut index) = super::private_index::make(&repo, head_tree)?;
        let private = dir.path().join("index");
        // Stat data made fresh where no filter can apply, so neither the status taken
        // next nor the snapshot hashes a file that did not change (see refresh.rs).
        super::refresh::refresh(&repo, &mut index);
        repo.set_index(&mut index)
            .map_err(git("install the private index"))?;
        // Stat data written before the index file was is trusted (git's racy rule).
        let since = fs::metadata(&private)
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let tracked = index.iter().map(|e| e.path).collect();
        Ok(Self {
            repo,
            exclude,
            limits: Limits::default(),
            scan: Scan::new(since),
            tracked,
            dropped_dirs: Vec::new(),
            skipped_files: BTreeMap::new(),
            unreadable: BTreeMap::new(),
            unseen: BTreeSet::new(),
            current: None,
            updated: None,
            _dir: dir,
        })
    }

    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    pub(crate) fn exclude(&self) -> &[String] {
        &self.exclude
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Sets the paths never snapshotted (repo-relative prefixes), before the first tree.
    pub(crate) fn set_exclude(&mut self, exclude: Vec<String>) {
        self.exclude = exclude;
    }

    /// Sets the size limits, before the first tree.
    pub(crate) fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// What is left out of the snapshots (for its size, or unreadable), by path.
    pub(crate) fn skipped(&self) -> Vec<Skipped> {
        let files = self.skipped_files.iter().map(|(path, bytes)| Skipped {
            path: path.clone(),
            bytes: *bytes,
            files: None,
            reason: None,
        });
        let root = self
            .repo
            .workdir()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let unreadable = self.unreadable.iter().map(|(path, why)| Skipped {
            path: path.clone(),
            bytes: super::rel_path::under(&root, path)
                .symlink_metadata()
                .map_or(0, |m| m.len()),
            files: None,
            reason: Some(why.clone()),
        });
        let mut all: Vec<Skipped> = files
            .chain(unreadable)
            .chain(self.scan.skipped_dirs())
            .map(|mut s| {
                s.path = super::rel_path::shown(&s.path);
                s
            })
            .collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// Brings the private index up to date with the working tree (tracked and untracked
    /// files, ignored ones left out unless already tracked, too-big untracked ones left
    /// out) and gives its tree. Only what the scan finds may have changed is read.
    pub(crate) fn tree(&mut self) -> Result<Oid, CheckpointError> {
        self.tree_after(None)
    }

    /// As [`tree`](Self::tree) for the start snapshot, from what the run's git status
    /// found changed (`seen`) instead of a scan of every file and folder: only those
    /// paths are read, and the untracked folders it named are walked.
    pub(crate) fn tree_from_status(&mut self, seen: &Seen) -> Result<Oid, CheckpointError> {
        self.tree_after(Some(seen))
    }

    /// The tree after a whole scan (`seen` is `None`) or after reading what git status
    /// named: what either finds is brought into the private index.
    fn tree_after(&mut self, seen: Option<&Seen>) -> Result<Oid, CheckpointError> {
        let mut index = self.repo.index().map_err(git("open the private index"))?;
        let root = self.root()?.to_path_buf();
        let outside = |p: &&String| !is_excluded(Path::new(p.as_str()), &self.exclude);
        let cx = Context {
            repo: &self.repo,
            index: &index,
            root: &root,
            exclude: &self.exclude,
            max_dir_files: self.limits.max_dir_files,
        };
        let found = match seen {
            None => self.scan.run(&cx, &self.skipped_files).paths,
            Some(seen) => {
                let new_dirs: Vec<String> = seen.new_dirs.iter().filter(outside).cloned().collect();
                let mut found = self.scan.seeded(&cx, &new_dirs).paths;
                found.extend(seen.files.iter().filter(outside).cloned());
                found
            }
        };
        let paths = self.skip_grown_dirs(&mut index, found)?;
        let tree = self.apply(index, &paths, Checked::Ignored)?;
        self.rescan_if_rules_changed(tree)
    }

    /// A `.gitignore` changed in this snapshot: what it ignores or un-ignores is taken
    /// into the same snapshot, by a scan that reads every folder (as `git add -A` would).
    fn rescan_if_rules_changed(&mut self, tree: Oid) -> Result<Oid, CheckpointError> {
        if self.scan.reads_everything_next() {
            self.tree()
        } else {
            Ok(tree)
        }
    }

    /// As [`tree`](Self::tree), but only `paths` (repo-relative) are looked at: the
    /// files a tool named. The first snapshot always scans.
    pub(crate) fn tree_of(&mut self, paths: &[String]) -> Result<Oid, CheckpointError> {
        if self.current.is_none() {
            return self.tree();
        }
        let index = self.repo.index().map_err(git("open the private index"))?;
        let paths: BTreeSet<String> = paths
            .iter()
            .filter(|p| !is_excluded(Path::new(p), &self.exclude))
            .cloned()
            .collect();
        let tree = self.apply(index, &paths, Checked::Nothing)?;
        self.rescan_if_rules_changed(tree)
    }

    pub(super) fn root(&self) -> Result<&Path, CheckpointError> {
        (self.repo.workdir())
            .ok_or_else(|| Unavailable::NoWorkingTree(self.repo.path().to_path_buf()).into())
    }
}

/// What the run's git status at start found changed in the working tree
/// (repo-relative): files that differ from the index or are not in it, and untracked
/// folders (named whole, as the status names them).
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) files: Vec<String>,
    pub(crate) new_dirs: Vec<String>,
}

impl Seen {
    /// What `statuses` (untracked folders not recursed into) found changed in the working
    /// tree; submodules and conflicts are left to a scan, as the scan leaves them.
    pub(crate) fn of(statuses: &git2::Statuses<'_>, index: &git2::Index) -> Seen {
        use git2::Status as S;
        let changed = S::WT_NEW | S::WT_MODIFIED | S::WT_DELETED | S::WT_TYPECHANGE;
        let mut seen = Seen::default();
        for entry in statuses.iter() {
            let status = entry.status();
            if !status.intersects(changed) || status.contains(S::CONFLICTED) {
                continue;
            }
            let path = super::rel_path::from_bytes(entry.path_bytes()).into_owned();
            if let Some(dir) = path.strip_suffix('/') {
                seen.new_dirs.push(dir.to_owned());
                continue;
            }
            let submodule = index
                .get_path(&super::rel_path::os(&path), 0)
                .is_some_and(|e| e.mode == 0o160000);
            if !submodule {
                seen.files.push(path);
            }
        }
        seen
    }
}

/// What the caller of [`Snapshotter::apply`] has checked about its paths already.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    /// Nothing: a path the index does not hold may be ignored.
    Nothing,
    /// New paths are known not to be ignored (the scan asked).
    Ignored,
}

/// Whether repo-relative `path` is one of `prefixes` or inside one.
pub(crate) fn is_excluded(path: &Path, prefixes: &[String]) -> bool {
    let path = path.to_string_lossy();
    prefixes.iter().any(|prefix| {
        path.strip_prefix(prefix.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Opens the repository that contains `workspace`, or says in one sentence why there is
/// no usable one (not a repository, bare, owned by someone else). Other failures are
/// errors.
pub(crate) fn open_repo(
    workspace: &Path,
) -> Result<Result<Repository, Unavailable>, CheckpointError> {
    let path = workspace.to_path_buf();
    let repo = match Repository::discover(workspace) {
        Ok(repo) => repo,
        Err(e) if e.code() == ErrorCode::NotFound => {
            return Ok(Err(Unavailable::NotARepository(path)));
        }
        Err(e) if e.code() == ErrorCode::Owner => {
            return Ok(Err(Unavailable::OwnedByOther {
                path,
                message: e.message().to_owned(),
            }));
        }
        Err(source) => {
            return Err(CheckpointError::Git {
                action: "open the repository",
                source,
            });
        }
    };
    if repo.workdir().is_none() {
        return Ok(Err(Unavailable::NoWorkingTree(path)));
    }
    Ok(Ok(repo))
}

/// The repository's working tree root, canonicalized.
pub(crate) fn workdir(repo: &Repository) -> Result<PathBuf, CheckpointError> {
    let dir =
        (repo.workdir()).ok_or_else(|| Unavailable::NoWorkingTree(repo.path().to_path_buf()))?;
    fs::canonicalize(dir).map_err(io("resolve", dir))
}

/// `paths` (absolute, or relative to `workspace`) as repo-relative `/`-separated prefixes;
/// paths outside the working tree are dropped.
pub(crate) fn relative_prefixes(root: &Path, workspace: &Path, paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|p| {
            let absolute = lenient_canonical(&workspace.join(p));
            let rel = absolute.strip_prefix(root).ok()?;
            let parts: Vec<String> = rel
                .components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(super::rel_path::from_os(s).into_owned()),
                    _ => None,
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join("/"))
        })
        .collect()
}

/// `path` with its longest existing ancestor canonicalized (the rest appended), so a
/// folder that does not exist yet still resolves through symlinked parents.
fn lenient_canonical(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(found) = fs::canonicalize(&current) {
            return missing.iter().rev().fold(found, |acc, part| acc.join(part));
        }
        match (
            current.file_name().map(|n| n.to_os_string()),
            current.parent(),
        ) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusion_matches_the_folder_and_what_is_inside_only() {
        let prefixes = vec![".cn-run/out".to_string()];
        assert!(is_excluded(Path::new(".cn-run/out"), &prefixes));
        assert!(is_excluded(
            Path::new(".cn-run/out/events.jsonl"),
            &prefixes
        ));
        assert!(!is_excluded(Path::new(".cn-run/outside.txt"), &prefixes));
        assert!(!is_excluded(Path::new(".cn-run"), &prefixes));
    }

    #[test]
    fn excluded_paths_become_repo_relative_even_before_they_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let workspace = root.join("pkg");
        fs::create_dir(&workspace).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let paths = [
            PathBuf::from(".cn-run/run-1"),
            root.join("top/out"),
            outside.path().to_path_buf(),
        ];
        assert_eq!(
            relative_prefixes(&root, &workspace, &paths),
            ["pkg/.cn-run/run-1", "top/out"]
        );
    }
}
