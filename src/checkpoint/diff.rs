//! The run's patch and diffstat, and change counts between snapshots.
//!
//! The patch is libgit2's rendering of a tree-to-tree diff in git's own format. Type
//! changes (a file becoming a symlink) are left as a deletion plus an addition, which is
//! how `git diff` writes them and what `git apply` expects. Binary files are named as
//! changed (`Binary files a/x and b/x differ`) unless the job asks for their content,
//! then they come out as `GIT binary patch` sections with full object ids, which `git
//! apply` requires. Files left out of the snapshots for their size are named in a note
//! before the first file (where `git apply` reads no patch), never with content. The
//! patch is bytes, not a string: files in other encodings must survive unchanged.

use git2::{Diff, DiffOptions, Oid, Repository};

use super::error::{CheckpointError, git};
use super::{DiffStat, Skipped};

/// The patch from tree `from` to tree `to` (binary content only when `binary`), and
/// its size; `skipped` is named at the top.
pub(crate) fn patch(
    repo: &Repository,
    from: Oid,
    to: Oid,
    binary: bool,
    skipped: &[Skipped],
) -> Result<(Vec<u8>, DiffStat), CheckpointError> {
    let mut opts = DiffOptions::new();
    opts.show_binary(binary).ignore_submodules(false);
    let diff = tree_diff(repo, from, to, &mut opts)?;
    let stats = diff.stats().map_err(git("count the diff"))?;
    let stat = DiffStat {
        files: stats.files_changed(),
        insertions: stats.insertions(),
        deletions: stats.deletions(),
    };
    let mut text = skipped_note(skipped);
    for i in 0..diff.deltas().len() {
        if let Some(mut one) = git2::Patch::from_diff(&diff, i).map_err(git("render the diff"))? {
            let buf = one.to_buf().map_err(git("render the diff"))?;
            text.extend_from_slice(&buf);
        }
    }
    Ok((text, stat))
}

/// The lines naming what the snapshots left out, or nothing.
fn skipped_note(skipped: &[Skipped]) -> Vec<u8> {
    if skipped.is_empty() {
        return Vec::new();
    }
    let mut note = String::from(
        "cn-run: left out of the checkpoints and of this patch (untracked and over the size limits, or unreadable):\n",
    );
    for s in skipped {
        let what = match (&s.reason, s.files) {
            (Some(why), _) => why.clone(),
            (None, Some(n)) => format!("folder, more than {n} files, {} bytes counted", s.bytes),
            (None, None) => format!("{} bytes", s.bytes),
        };
        note.push_str(&format!("  {} ({what})\n", s.path.escape_debug()));
    }
    note.push('\n');
    note.into_bytes()
}

/// How many paths differ between two trees (no content is read).
pub(crate) fn count_changes(
    repo: &Repository,
    from: Oid,
    to: Oid,
) -> Result<usize, CheckpointError> {
    let mut opts = DiffOptions::new();
    opts.skip_binary_check(true).include_typechange(true);
    Ok(tree_diff(repo, from, to, &mut opts)?.deltas().len())
}

/// The diff between two trees given by id.
pub(crate) fn tree_diff<'r>(
    repo: &'r Repository,
    from: Oid,
    to: Oid,
    opts: &mut DiffOptions,
) -> Result<Diff<'r>, CheckpointError> {
    let from = repo.find_tree(from).map_err(git("read a snapshot tree"))?;
    let to = repo.find_tree(to).map_err(git("read a snapshot tree"))?;
    repo.diff_tree_to_tree(Some(&from), Some(&to), Some(opts))
        .map_err(git("compare snapshot trees"))
}
