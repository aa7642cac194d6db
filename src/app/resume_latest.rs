//! `--resume latest` (`--continue`) without `--out` picks the newest run in the current
//! folder's `.cn-run`. A run's workspace `.cn-run` is read-only to its commands, but a
//! folder below a workspace is not: from `ws/sub`, `sub/.cn-run` may hold a run folder a
//! contained command forged, whose recorded job turns the sandbox off. So `latest` is
//! refused there: when a folder above the current one holds a `.cn-run` (the workspace of
//! an earlier run, whose commands could write here), the user resumes from that folder or
//! names the run.

use std::path::{Path, PathBuf};

/// Why `latest` without `--out` may not be picked from `here`, if so.
pub(super) fn refused_from(here: &Path) -> Option<String> {
    let here = here.canonicalize().unwrap_or_else(|_| here.to_path_buf());
    let above = workspace_above(&here)?;
    Some(format!(
        "--resume latest (--continue): the current folder {} lies inside {}, the workspace \
         of an earlier run, whose commands could have written the run folders here; resume \
         from {} or name the run (--resume ID, --resume PATH, or --resume latest --out DIR)",
        here.display(),
        above.display(),
        above.display()
    ))
}

/// The nearest folder above `here` that holds a `.cn-run` folder, `here` not inside that
/// `.cn-run` (cn-run's own, read-only to commands: a worktree of a parallel run lies there).
fn workspace_above(here: &Path) -> Option<PathBuf> {
    here.ancestors()
        .skip(1)
        .find(|d| {
            let runs = d.join(".cn-run");
            !here.starts_with(&runs) && runs.symlink_metadata().is_ok_and(|m| m.is_dir())
        })
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_below_an_earlier_runs_workspace_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let sub = ws.join("sub/deeper");
        std::fs::create_dir_all(ws.join(".cn-run")).unwrap();
        std::fs::create_dir_all(sub.join(".cn-run")).unwrap();
        assert!(refused_from(&ws).is_none(), "the workspace itself");
        let why = refused_from(&sub).unwrap();
        assert!(why.contains("lies inside"), "{why}");
        assert!(refused_from(tmp.path()).is_none());
        let own = ws.join(".cn-run/parallel-x/wt");
        std::fs::create_dir_all(&own).unwrap();
        assert!(
            refused_from(&own).is_none(),
            "inside the workspace's own .cn-run"
        );
    }
}
