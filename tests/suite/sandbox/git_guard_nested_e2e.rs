//! Nested repositories and submodules are the run's too (issue 29, item 3's gap): with the
//! sandbox off a command plants hooks, `core.fsmonitor`, `core.hooksPath`, a filter and
//! attributes in a nested repository's `.git` (two levels deep too), in a submodule's git
//! folder under `.git/modules`, and in a nested repository put where the first one was;
//! the run puts them back when it ends and says so, so the `git status` and `git commit`
//! the workflow runs next in each repository run nothing. The original moved away
//! (`sub-old`) is a git folder made during the run where it now lies: its hook is taken
//! out. The control: the same plant by hand, and the next git commands run it all.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::runner::{cn_run, git, git_init, run, write_files};

/// A repository `ws` with a nested repository `sub`, one deeper at `a/b/deep`, and a
/// submodule `mod` (its git folder in `.git/modules/mod`); the marks go beside `ws`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let source = root.join("source");
    write_files(&source, &[("lib.txt", "lib\n")]);
    git_init(&source);
    write_files(
        &ws,
        &[
            ("a.txt", "one\n"),
            (
                ".gitignore",
                "out/\njob.yaml\ns.json\nplant.sh\nsub/\na/\nsub-old/\nnew/\n",
            ),
            ("sub/s.txt", "s\n"),
            ("a/b/deep/d.txt", "d\n"),
        ],
    );
    git_init(&ws.join("sub"));
    git_init(&ws.join("a/b/deep"));
    git_init(&ws);
    git(
        &ws,
        &["-c", "protocol.file.allow=always", "submodule", "add", "-q"]
            .into_iter()
            .chain([source.to_str().unwrap(), "mod"])
            .collect::<Vec<_>>(),
    );
    git(&ws, &["commit", "-qm", "submodule"]);
    (tmp, ws)
}

/// The plant: `{m}` is the mark prefix. Every line is a way git runs a program later.
fn plant_script(mark: &Path) -> String {
    let m = mark.display();
    format!(
        "set -e\n\
         hook() {{ printf '#!/bin/sh\\ntouch {m}.%s\\n' \"$2\" > \"$1\"; chmod +x \"$1\"; }}\n\
         hook sub/.git/hooks/pre-commit sub-hook\n\
         hook sub/.git/hooks/post-index-change sub-index\n\
         git -C sub config core.fsmonitor 'touch {m}.sub-fsmonitor; false'\n\
         hook a/b/deep/.git/hooks/pre-commit deep-hook\n\
         mkdir -p /tmp/cn-run-hooks-$$ && hook /tmp/cn-run-hooks-$$/pre-commit deep-hookspath\n\
         git -C a/b/deep config core.hooksPath /tmp/cn-run-hooks-$$\n\
         git -C a/b/deep config filter.evil.clean 'touch {m}.deep-filter; cat'\n\
         printf '*.txt filter=evil\\n' > a/b/deep/.git/info/attributes\n\
         git -C mod config core.fsmonitor 'touch {m}.mod-fsmonitor; false'\n\
         hook .git/modules/mod/hooks/pre-commit mod-hook\n\
         mv sub sub-old && mkdir sub && git -C sub init -q && echo s > sub/s.txt\n\
         hook sub/.git/hooks/pre-commit moved-hook\n\
         git -C sub config core.fsmonitor 'touch {m}.moved-fsmonitor; false'\n\
         mkdir new && git -C new init -q\n"
    )
}

/// What the workflow runs next in each repository: `git status`, then a commit.
fn workflow_git(ws: &Path) {
    for dir in ["sub", "a/b/deep", "mod", "."] {
        for args in [
            &["status"][..],
            &["add", "-A"][..],
            &["commit", "-qm", "next", "--allow-empty"][..],
        ] {
            let _ = Command::new("git")
                .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(ws.join(dir))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
        }
    }
}

fn marks(ws: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ws.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mark."))
        .collect();
    v.sort();
    v
}

#[test]
fn what_a_run_plants_in_nested_repositories_and_submodules_is_put_back() {
    let (_tmp, ws) = repo();
    let mark = ws.parent().unwrap().join("mark");
    write_files(&ws, &[("plant.sh", &plant_script(&mark))]);
    let job = "version: 1\nname: nested\nmodel: {provider: script, name: m, script: s.json}\n\
               prompt: go\ntools: {bash: {sandbox: off}}\n";
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "sh plant.sh && echo planted"}}]},
        {"text": "done"}
    ]});
    write_files(&ws, &[("job.yaml", job), ("s.json", &script.to_string())]);
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let session = std::fs::read_to_string(ws.join("out/session.jsonl")).unwrap();
    assert!(session.contains("planted"), "{session}");
    let warnings = r.result()["warnings"].to_string();
    for said in [
        "sub/.git/hooks/pre-commit",
        "sub/.git/config",
        "deep/.git/hooks/pre-commit",
        "deep/.git/config",
        "deep/.git/info/attributes",
        "modules/mod/config",
        "modules/mod/hooks/pre-commit",
        "sub-old/.git/hooks/pre-commit (made during the run) was taken out",
    ] {
        assert!(warnings.contains(said), "{said} not said: {warnings}");
    }
    workflow_git(&ws);
    assert_eq!(
        marks(&ws),
        Vec::<String>::new(),
        "the next git commands ran what the run planted"
    );
}

#[test]
fn control_planted_by_hand_the_next_git_commands_run_it() {
    let (_tmp, ws) = repo();
    let mark = ws.parent().unwrap().join("mark");
    write_files(&ws, &[("plant.sh", &plant_script(&mark))]);
    let planted = Command::new("sh")
        .arg("plant.sh")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(planted.status.success(), "{planted:?}");
    workflow_git(&ws);
    let ran = marks(&ws);
    for m in [
        "mark.moved-fsmonitor",
        "mark.moved-hook",
        "mark.deep-hookspath",
        "mark.mod-fsmonitor",
        "mark.mod-hook",
    ] {
        assert!(ran.contains(&m.to_owned()), "{m} did not run: {ran:?}");
    }
}
