//! Bare repositories in the work tree (issue 29, item 3's last gap): a folder with `HEAD`,
//! `objects` and `refs` is a git folder to `git --git-dir=x` (or to git run inside it),
//! which reads its config and runs its hooks as it would a `.git`'s. One made during the run
//! (`git init --bare`, `git clone --bare`, `git --git-dir=x init`, made by hand, three levels
//! deep) keeps no hook but git's samples and no config key that runs a program; one present
//! at the start is recorded and put back like a nested repository. Each is said in
//! result.json's warnings. The workflow's next git commands on each (`--git-dir` with a
//! work tree: status, add, commit) then run nothing; the control plants the same by hand
//! and the same commands run every one.

use std::path::Path;
use std::process::Command;

use super::git_guard_replaced_e2e::{marks, plant_by_hand, run_plant, scene};

/// The plants, and per bare repository (relative to the work tree) the mark it must never
/// write.
fn bare_plant() -> (&'static str, Vec<(&'static str, &'static str)>) {
    (
        "git init -q --bare b1 && hook b1/hooks/pre-commit bare-hook\n\
         fsm b1 bare-fsmonitor\n\
         git clone -q --bare ../source b2.git\n\
         git --git-dir=b2.git config core.hooksPath \"$(dirname \"$PWD\")/hooks-bare\"\n\
         hook ../hooks-bare/pre-commit bare-hookspath\n\
         mkdir -p h/objects h/refs && echo 'ref: refs/heads/main' > h/HEAD && fsm h hand-fsmonitor\n\
         mkdir -p deep/x/y && git init -q --bare deep/x/y/d.git\n\
         printf '[core]\\n\\tfsmonitor = touch %s.bare-include; false\\n' \"$(dirname \"$PWD\")/mark\" > ../inc-bare.cfg\n\
         git --git-dir=deep/x/y/d.git config include.path \"$(dirname \"$PWD\")/inc-bare.cfg\"\n\
         mkdir w && git --git-dir=w/g init -q && hook w/g/hooks/pre-commit gitdir-init-hook\n\
         hook pre.git/hooks/pre-commit pre-hook\n\
         git --git-dir=pre.git config diff.external \"touch $(dirname \"$PWD\")/mark.pre-diff\"\n",
        vec![
            ("b1", "bare-hook"),
            ("b1", "bare-fsmonitor"),
            ("b2.git", "bare-hookspath"),
            ("h", "hand-fsmonitor"),
            ("deep/x/y/d.git", "bare-include"),
            ("w/g", "gitdir-init-hook"),
            ("pre.git", "pre-hook"),
            ("pre.git", "pre-diff"),
        ],
    )
}

/// A bare repository in the work tree before the run (the user's own).
fn bare_at_start(ws: &Path) {
    let out = Command::new("git")
        .args(["init", "-q", "--bare", "pre.git"])
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// What a workflow runs next on each bare repository: with a work tree of its own, status,
/// add, diff, commit.
fn workflow_on_bare(ws: &Path, places: &[(&str, &str)]) {
    for (i, (dir, _)) in places.iter().enumerate() {
        let tree = ws.parent().unwrap().join(format!("tree-{i}"));
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join("f.txt"), format!("{i}\n")).unwrap();
        let git_dir = format!("--git-dir={}", ws.join(dir).display());
        let work_tree = format!("--work-tree={}", tree.display());
        for args in [
            &["status"][..],
            &["add", "-A"][..],
            &["commit", "-qm", "next", "--allow-empty"][..],
            &["diff", "HEAD"][..],
        ] {
            let _ = Command::new("git")
                .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
                .args([git_dir.as_str(), work_tree.as_str()])
                .args(args)
                .current_dir(&tree)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
        }
        // A change for `diff` to show (the external diff runs only on a difference).
        std::fs::write(tree.join("f.txt"), "changed\n").unwrap();
        let _ = Command::new("git")
            .args([git_dir.as_str(), work_tree.as_str(), "diff"])
            .current_dir(&tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
    }
}

#[test]
fn bare_repositories_made_or_changed_during_the_run_keep_nothing_that_runs() {
    let (_tmp, ws, mark) = scene();
    bare_at_start(&ws);
    let (plant, places) = bare_plant();
    let r = run_plant(&ws, &mark, plant);
    assert_eq!(r.code, 0, "{r:#?}");
    let warnings = r.result()["warnings"].to_string().to_lowercase();
    for said in [
        "b1/hooks/pre-commit",
        "b1/config (made during the run): took out",
        "core.fsmonitor",
        "b2.git/config (made during the run): took out",
        "core.hookspath",
        "h/config (made during the run): took out",
        "d.git/config (made during the run): took out",
        "include.path",
        "w/g/hooks/pre-commit",
        "pre.git/hooks/pre-commit",
        "pre.git/config",
    ] {
        assert!(warnings.contains(said), "{said} not said: {warnings}");
    }
    workflow_on_bare(&ws, &places);
    assert_eq!(
        marks(ws.parent().unwrap()),
        Vec::<String>::new(),
        "{warnings}"
    );
    // The bare clone keeps its history and remote, and git's samples.
    let clone = ws.join("b2.git");
    let log = Command::new("git")
        .arg(format!("--git-dir={}", clone.display()))
        .args(["log", "--format=%s"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains("start"));
    assert!(clone.join("hooks/pre-commit.sample").exists());
}

#[test]
fn control_bare_repositories_planted_by_hand_run_it_all() {
    let (_tmp, ws, mark) = scene();
    bare_at_start(&ws);
    let (plant, places) = bare_plant();
    plant_by_hand(&ws, &mark, plant);
    workflow_on_bare(&ws, &places);
    let ran = marks(ws.parent().unwrap());
    for (_, tag) in &places {
        assert!(
            ran.contains(&format!("mark.{tag}")),
            "{tag} did not run: {ran:?}"
        );
    }
}
