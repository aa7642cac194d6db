//! `.git` swapped or made during the run (issue 29, items 3 and 4's gaps), with the sandbox
//! off (where a command can do it): the work tree's own `.git` replaced by a link, a
//! `gitdir:` file or another folder is put back (the repository's own folder renamed back
//! from wherever in the work tree it went; what stood there moved aside), and one deleted
//! is said, its replacement moved aside; repositories made, cloned or moved in keep no
//! hook but git's samples and no config key that runs a program, and a nested `.git` that
//! is a link or leads out of the work tree is moved aside. Each is said in result.json's
//! warnings. The workflow's next git commands in each place then run nothing. The controls:
//! the same plants by hand, and the same git commands run every one.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::runner::{Run, cn_run, git, git_init, run, write_files};

/// A committed repository `<tmp>/ws` (one commit, `start`), a repository `<tmp>/source` to
/// clone, and the mark prefix `<tmp>/mark`.
pub(super) fn scene() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    write_files(
        &ws,
        &[
            ("a.txt", "one\n"),
            (".gitignore", "out/\njob.yaml\ns.json\nplant.sh\n"),
        ],
    );
    git_init(&ws);
    write_files(&root.join("source"), &[("lib.txt", "lib\n")]);
    git_init(&root.join("source"));
    let mark = root.join("mark");
    (tmp, ws, mark)
}

/// Shell lines that plant: `hook FILE TAG` writes an executable hook touching `MARK.TAG`;
/// `fsm DIR TAG` (a git folder) sets its `core.fsmonitor` to touch `MARK.TAG`.
fn prelude(mark: &Path) -> String {
    let m = mark.display();
    format!(
        "set -e\n\
         hook() {{ mkdir -p \"$(dirname \"$1\")\"; printf '#!/bin/sh\\ntouch {m}.%s\\n' \"$2\" > \"$1\"; chmod +x \"$1\"; }}\n\
         fsm() {{ git --git-dir=\"$1\" config core.fsmonitor \"touch {m}.$2; false\"; }}\n"
    )
}

/// Ways to replace the work tree's `.git` (name, script), each keeping or losing the
/// original folder; the replacement's fsmonitor writes `mark.NAME`.
fn replacements() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "link-out",
            "cp -r .git ../evil-a.git && fsm ../evil-a.git link-out && mv .git kept && ln -s ../evil-a.git .git",
        ),
        (
            "link-in",
            "mkdir -p d/e && mv .git d/e/kept && cp -r d/e/kept evil && fsm evil link-in && ln -s evil .git",
        ),
        (
            "pointer-in",
            "mv .git saved && cp -r saved evil && fsm evil pointer-in && printf 'gitdir: evil\\n' > .git",
        ),
        (
            "pointer-out",
            "mv .git .saved && cp -r .saved ../evil-b && fsm ../evil-b pointer-out && printf 'gitdir: ../evil-b\\n' > .git",
        ),
        ("folder", "mv .git old && cp -r old .git && fsm .git folder"),
        (
            "gone",
            "cp -r .git ../evil-c.git && fsm ../evil-c.git gone && rm -rf .git && ln -s ../evil-c.git .git",
        ),
    ]
}

/// Run `plant` (after the prelude) in `ws` as the run's one command, sandbox off.
pub(super) fn run_plant(ws: &Path, mark: &Path, plant: &str) -> Run {
    write_files(ws, &[("plant.sh", &format!("{}{plant}\n", prelude(mark)))]);
    let job = "version: 1\nname: replaced\nmodel: {provider: script, name: m, script: s.json}\n\
               prompt: go\ntools: {bash: {sandbox: off}}\n";
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "sh plant.sh && echo planted"}}]},
        {"text": "done"}
    ]});
    write_files(ws, &[("job.yaml", job), ("s.json", &script.to_string())]);
    let out = ws.parent().unwrap().join("out");
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&out));
    let session = std::fs::read_to_string(out.join("session.jsonl")).unwrap_or_default();
    assert!(
        session.contains("planted"),
        "the plant did not run: {session}"
    );
    r
}

/// Plant by hand (the control).
pub(super) fn plant_by_hand(ws: &Path, mark: &Path, plant: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{}{plant}\n", prelude(mark)))
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// What a workflow runs next in `dir`: status, add, commit (the machine's git, no user
/// config).
fn workflow_git(dir: &Path) {
    for args in [
        &["status"][..],
        &["add", "-A"][..],
        &["commit", "-qm", "next", "--allow-empty"][..],
    ] {
        let _ = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
            .output()
            .unwrap();
    }
}

pub(super) fn marks(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mark."))
        .collect();
    v.sort();
    v
}

#[test]
fn the_work_trees_git_replaced_during_the_run_is_put_back() {
    for (name, plant) in replacements() {
        let (_tmp, ws, mark) = scene();
        let r = run_plant(&ws, &mark, plant);
        assert_eq!(r.code, 0, "{name}: {r:#?}");
        let warnings = r.result()["warnings"].to_string();
        workflow_git(&ws);
        assert_eq!(
            marks(ws.parent().unwrap()),
            Vec::<String>::new(),
            "{name}: {warnings}"
        );
        if name == "gone" {
            assert!(warnings.contains("is gone"), "{name}: {warnings}");
            assert!(
                ws.join(".git.cn-run-disabled").symlink_metadata().is_ok(),
                "{name}"
            );
            continue;
        }
        assert!(
            warnings.contains("was replaced during the run"),
            "{name}: {warnings}"
        );
        let meta = ws.join(".git").symlink_metadata().unwrap();
        assert!(meta.is_dir(), "{name}: .git is not a folder again");
        // The repository's own history is back: its one commit, then the workflow's.
        let log = git(&ws, &["log", "--format=%s"]);
        assert!(log.ends_with("start\n"), "{name}: {log}");
    }
}

#[test]
fn control_a_replaced_git_planted_by_hand_runs_in_the_next_git_command() {
    for (name, plant) in replacements() {
        let (_tmp, ws, mark) = scene();
        plant_by_hand(&ws, &mark, plant);
        workflow_git(&ws);
        assert!(
            marks(ws.parent().unwrap()).contains(&format!("mark.{name}")),
            "{name}: the replacement's fsmonitor did not run"
        );
    }
}

/// Repositories made, cloned or moved in during the run, and the places the workflow runs
/// git next (relative to the work tree), each with the marks it must never write.
fn fresh_plant() -> (&'static str, Vec<(&'static str, &'static str)>) {
    (
        "git init -q new && hook new/.git/hooks/pre-commit new-hook\n\
         fsm new/.git new-fsmonitor\n\
         git -C new config core.hooksPath ../../hooks-elsewhere\n\
         hook ../hooks-elsewhere/post-index-change new-hookspath\n\
         git clone -q ../source cloned && hook cloned/.git/hooks/pre-commit clone-hook\n\
         printf '[core]\\n\\tfsmonitor = touch %s.clone-include; false\\n' \"$(dirname \"$PWD\")/mark\" > ../inc.cfg\n\
         git -C cloned config include.path \"$(dirname \"$PWD\")/inc.cfg\"\n\
         git -C cloned config filter.evil.clean \"touch $(dirname \"$PWD\")/mark.clone-filter; cat\"\n\
         echo '*.txt filter=evil' > cloned/.gitattributes && echo x > cloned/lib.txt\n\
         git init -q ../prep && echo a > ../prep/f && git -C ../prep add f\n\
         git -C ../prep -c user.name=a -c user.email=a@b.c commit -qm x && echo b > ../prep/f\n\
         hook ../prep/.git/hooks/pre-commit moved-hook && mv ../prep moved\n\
         git --git-dir=moved/.git config diff.external \"touch $(dirname \"$PWD\")/mark.moved-diff\"\n\
         git init -q ../out1 && hook ../out1/.git/hooks/pre-commit link-hook\n\
         fsm ../out1/.git link-fsmonitor\n\
         mkdir linked && ln -s ../../out1/.git linked/.git\n\
         git init -q ../out2 && fsm ../out2/.git pointer-fsmonitor\n\
         mkdir pointed && printf 'gitdir: ../../out2/.git\\n' > pointed/.git\n\
         mkdir -p deep/a/b && git init -q deep/a/b/r && hook deep/a/b/r/.git/hooks/pre-commit deep-hook\n",
        // (`new`'s own pre-commit hook is planted too; its `core.hooksPath` wins.)
        vec![
            ("new", "new-fsmonitor"),
            ("new", "new-hookspath"),
            ("cloned", "clone-hook"),
            ("cloned", "clone-include"),
            ("cloned", "clone-filter"),
            ("moved", "moved-hook"),
            ("moved", "moved-diff"),
            ("linked", "link-hook"),
            ("linked", "link-fsmonitor"),
            ("pointed", "pointer-fsmonitor"),
            ("deep/a/b/r", "deep-hook"),
        ],
    )
}

/// The workflow's git in each place: `git diff` (what `diff.external` runs), then
/// [`workflow_git`].
fn workflow_everywhere(ws: &Path, places: &[(&str, &str)]) {
    for (dir, _) in places {
        let dir = ws.join(dir);
        let _ = Command::new("git")
            .args(["diff"])
            .current_dir(&dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output();
        workflow_git(&dir);
    }
}

#[test]
fn repositories_made_cloned_or_moved_in_during_the_run_keep_nothing_that_runs() {
    let (_tmp, ws, mark) = scene();
    let (plant, places) = fresh_plant();
    let r = run_plant(&ws, &mark, plant);
    assert_eq!(r.code, 0, "{r:#?}");
    let warnings = r.result()["warnings"].to_string();
    for said in [
        "new/.git/hooks/pre-commit",
        "new/.git/config (made during the run): took out",
        "core.fsmonitor",
        "core.hookspath",
        "cloned/.git/hooks/pre-commit",
        "filter.evil.clean",
        "moved/.git/hooks/pre-commit",
        "diff.external",
        "linked/.git (made during the run)",
        "pointed/.git (made during the run)",
        "r/.git/hooks/pre-commit",
    ] {
        assert!(
            warnings.to_lowercase().contains(&said.to_lowercase()),
            "{said} not said: {warnings}"
        );
    }
    workflow_everywhere(&ws, &places);
    assert_eq!(
        marks(ws.parent().unwrap()),
        Vec::<String>::new(),
        "{warnings}"
    );
    // The clone is still a repository with its history and remote; git's samples stay.
    let cloned = ws.join("cloned");
    assert!(git(&cloned, &["log", "--format=%s"]).contains("start"));
    assert!(git(&cloned, &["config", "remote.origin.url"]).contains("source"));
    assert!(cloned.join(".git/hooks/pre-commit.sample").exists());
    // The links and pointers leading out are moved aside, their targets untouched.
    assert!(
        ws.join("linked/.git.cn-run-disabled")
            .symlink_metadata()
            .is_ok()
    );
    assert!(
        ws.parent()
            .unwrap()
            .join("out1/.git/hooks/pre-commit")
            .exists()
    );
}

#[test]
fn control_fresh_repositories_planted_by_hand_run_it_all() {
    let (_tmp, ws, mark) = scene();
    let (plant, places) = fresh_plant();
    plant_by_hand(&ws, &mark, plant);
    workflow_everywhere(&ws, &places);
    let ran = marks(ws.parent().unwrap());
    for (_, tag) in &places {
        assert!(
            ran.contains(&format!("mark.{tag}")),
            "{tag} did not run: {ran:?}"
        );
    }
}
