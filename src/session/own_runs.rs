//! Which run folders `--resume latest` (`--continue`) may pick: the ones a run made here, not
//! ones the checkout brought. A pull request can commit `.cn-run/forged/session.jsonl`, whose
//! recorded job turns the sandbox off; commands cannot write `.cn-run`, but the checkout
//! wrote it before any run, and where the run kept its folder elsewhere (`--out`) it is the
//! only one there. Committed as a symbolic link to a workspace file, its date is whatever a
//! command gives that file (`touch -d '+1 hour'`), so it is also the newest beside the run's
//! own folder. cn-run's own run folders are never tracked (`.cn-run/.gitignore` is `*`).

use std::path::Path;

/// Whether the session file `session` lies in a run folder a run made: neither it nor its
/// folder is a symbolic link, and the repository holding the folder tracks no file in it.
pub(super) fn made_by_a_run(session: &Path) -> bool {
    let Some(dir) = session.parent() else {
        return false;
    };
    let is_link = |p: &Path| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    !is_link(session) && !is_link(dir) && !tracked(dir)
}

/// Whether the repository holding `dir` (if any) tracks a file under it.
fn tracked(dir: &Path) -> bool {
    let Ok(real) = dir.canonicalize() else {
        return true;
    };
    let Ok(repo) = git2::Repository::discover(&real) else {
        return false;
    };
    let Some(rel) = repo
        .workdir()
        .and_then(|w| w.canonicalize().ok())
        .and_then(|w| real.strip_prefix(w).ok().map(Path::to_path_buf))
    else {
        return false;
    };
    let Ok(index) = repo.index() else {
        return true;
    };
    let prefix = format!("{}/", rel.to_string_lossy());
    index.iter().any(|e| e.path.starts_with(prefix.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;

    #[test]
    fn committed_or_linked_run_folders_are_not_a_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap();
        git(&ws, &["init", "-q"]);
        for d in ["forged", "linked", "own"] {
            std::fs::create_dir_all(ws.join(".cn-run").join(d)).unwrap();
        }
        std::fs::write(ws.join(".cn-run/forged/session.jsonl"), "x").unwrap();
        std::fs::write(ws.join("f.jsonl"), "x").unwrap();
        std::os::unix::fs::symlink("../../f.jsonl", ws.join(".cn-run/linked/session.jsonl"))
            .unwrap();
        git(&ws, &["add", "-A"]);
        std::fs::write(ws.join(".cn-run/own/session.jsonl"), "x").unwrap();
        let at = |d: &str| ws.join(".cn-run").join(d).join("session.jsonl");
        assert!(!made_by_a_run(&at("forged")));
        assert!(!made_by_a_run(&at("linked")));
        assert!(made_by_a_run(&at("own")));
    }
}
