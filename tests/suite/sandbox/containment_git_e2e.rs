//! `.git` and the run's own records are not the model's (issue 29, the sandbox's side of
//! items 3 and 4): a contained command cannot plant a hook, change the config (an
//! fsmonitor), add attributes, move or remove `.git`, rewrite a `gitdir:` pointer or the
//! git folder it names, touch a nested repository or a linked worktree's git folder, or
//! commit — unless the job says `git: commit`, and then only commit; nor can it write into
//! the run's folder, given by `--out` or the default `.cn-run/<run>/` in the workspace. As
//! root and as an ordinary user; the control runs the same payloads uncontained.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// A repository with a commit, a nested one, a pointer-file one whose git folder lies
/// elsewhere in the workspace, and a linked worktree.
fn repos(ws: &Path) {
    git(ws, &["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(ws, &["add", "a.txt"]);
    git(ws, &["commit", "-qm", "base"]);
    std::fs::create_dir_all(ws.join("sub/inner")).unwrap();
    git(&ws.join("sub/inner"), &["init", "-q"]);
    std::fs::create_dir_all(ws.join("pointed")).unwrap();
    std::fs::create_dir_all(ws.join("store")).unwrap();
    git(
        ws,
        &["init", "-q", "--separate-git-dir", "store/gd", "pointed"],
    );
    git(ws, &["worktree", "add", "-q", "linked"]);
}

/// Files with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// Every file under the git folders and the pointer files, with its bytes.
fn snapshot(ws: &Path) -> Files {
    let mut files = Vec::new();
    for top in [
        ".git",
        "sub/inner/.git",
        "store/gd",
        "pointed/.git",
        "linked/.git",
    ] {
        let mut stack = vec![ws.join(top)];
        while let Some(p) = stack.pop() {
            match std::fs::read_dir(&p) {
                // cn-run's own git work (outside the sandbox) may add objects; a commit by
                // a command is seen by the commit count.
                Ok(_) if p.ends_with("objects") => {}
                Ok(rd) => stack.extend(rd.flatten().map(|e| e.path())),
                Err(_) => files.push((
                    p.strip_prefix(ws).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap_or_default(),
                )),
            }
        }
    }
    files.sort();
    files
}

/// (tag, command): each tries to change a git folder.
fn cases(out: &str) -> Vec<(&'static str, String)> {
    vec![
        ("hook", "printf '#!/bin/sh\\ntouch /tmp/x\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit".to_owned()),
        ("fsmonitor", "git config core.fsmonitor 'touch /tmp/x'".to_owned()),
        ("config-append", "echo '[core] hooksPath = /tmp' >> .git/config".to_owned()),
        ("attributes", "echo '* filter=evil' > .git/info/attributes".to_owned()),
        ("move", "mv .git .git-old".to_owned()),
        ("remove-hooks", "rm -rf .git/hooks".to_owned()),
        ("nested", "echo x > sub/inner/.git/hooks/post-checkout".to_owned()),
        ("pointer", "echo 'gitdir: /tmp/evil' > pointed/.git".to_owned()),
        ("gitdir", "echo x > store/gd/hooks/pre-commit".to_owned()),
        ("worktree", "git -C linked config core.worktree /".to_owned()),
        ("linked-pointer", "echo 'gitdir: /tmp' > linked/.git".to_owned()),
        ("commit", "git -c user.name=m -c user.email=m@m commit -q --allow-empty -m agent".to_owned()),
        ("ref", "git update-ref refs/heads/moved HEAD && echo $(git rev-parse HEAD) > .git/refs/heads/moved2".to_owned()),
        ("run-folder", format!("echo evil > '{out}/evil'; rm -f '{out}/events.jsonl'")),
        ("cn-run-folders", "for d in .cn-run/*/; do echo evil > \"$d/evil\"; done; ls .cn-run/*/evil".to_owned()),
    ]
}

/// Run the cases as `user` with `extra`; (scene, the git files before) after the run.
fn run(user: User, extra: &str) -> Option<(Scene, Files)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    repos(&s.ws);
    // A record of an earlier run in the workspace's `.cn-run`.
    std::fs::create_dir_all(s.ws.join(".cn-run/earlier")).unwrap();
    std::fs::write(s.ws.join(".cn-run/earlier/result.json"), "{}").unwrap();
    let before = snapshot(&s.ws);
    let out = s.out.display().to_string();
    let calls: Vec<Value> = cases(&out)
        .iter()
        .map(|(tag, c)| bash(&format!("touch ran-{tag}; {c}")))
        .collect();
    let extra = format!("git: {{checkpoints: false}}\n{extra}");
    let r = s.run(&calls, &extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for (tag, _) in cases(&out) {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run"
        );
    }
    Some((s, before))
}

fn commits(ws: &Path) -> usize {
    let o = Command::new("git")
        .args(["-c", "safe.directory=*", "rev-list", "--count", "--all"])
        .current_dir(ws)
        .env("GIT_CEILING_DIRECTORIES", ws.parent().unwrap())
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn assert_records_untouched(s: &Scene) {
    assert!(!s.out.join("evil").exists());
    assert!(s.out.join("events.jsonl").exists());
    assert!(!s.ws.join(".cn-run/earlier/evil").exists());
}

fn assert_git_read_only(user: User) {
    let Some((s, before)) = run(user, "") else {
        return;
    };
    let after = snapshot(&s.ws);
    let changed: Vec<&String> = after
        .iter()
        .chain(&before)
        .filter(|f| !after.contains(f) || !before.contains(f))
        .map(|(p, _)| p)
        .collect();
    assert!(
        changed.is_empty(),
        "changed {changed:?}\n{}",
        s.tool_outputs()
    );
    assert_eq!(commits(&s.ws), 1);
    assert_records_untouched(&s);
}

#[test]
fn root_commands_change_no_git_folder_and_no_run_record() {
    assert_git_read_only(User::Root);
}

#[test]
fn an_ordinary_users_commands_change_no_git_folder_and_no_run_record() {
    assert_git_read_only(User::Nobody);
}

/// `git: commit`: the commit lands; hooks, config, info and the pointer files do not
/// change.
#[test]
fn with_git_commit_the_agent_commits_but_hooks_config_and_info_stay() {
    for user in [User::Root, User::Nobody] {
        let Some((s, before)) = run(user, "tools: {bash: {git: commit}}\n") else {
            continue;
        };
        assert!(
            commits(&s.ws) > 1,
            "{user:?}: no commit\n{}",
            s.tool_outputs()
        );
        let kept = |files: &[(String, Vec<u8>)]| -> Files {
            files
                .iter()
                .filter(|(p, _)| {
                    ["/hooks/", "/config", "/info/"]
                        .iter()
                        .any(|k| p.contains(k))
                        || p == "pointed/.git"
                        || p == "linked/.git"
                })
                .cloned()
                .collect()
        };
        let (after, before) = (kept(&snapshot(&s.ws)), kept(&before));
        let changed: Vec<&String> = after
            .iter()
            .chain(&before)
            .filter(|f| !after.contains(f) || !before.contains(f))
            .map(|(p, _)| p)
            .collect();
        assert!(
            changed.is_empty(),
            "{user:?}: changed {changed:?}\n{}",
            s.tool_outputs()
        );
        assert_records_untouched(&s);
        let sandbox = &s
            .run(&[bash("true")], "tools: {bash: {git: commit}}\n")
            .result()["sandbox"];
        assert_eq!(sandbox["git"], "commit", "{sandbox}");
    }
}

#[test]
fn control_uncontained_the_same_payloads_change_git_and_the_run_folder() {
    let Some((s, before)) = run(User::Root, "tools: {bash: {sandbox: off}}\n") else {
        return;
    };
    let after = snapshot(&s.ws);
    assert_ne!(after, before);
    // `mv .git .git-old` worked; the post-run check put the folder back and said so.
    let result = std::fs::read_to_string(s.out.join("result.json")).unwrap();
    assert!(
        result.contains("is put back from") && result.contains(".git-old"),
        "{result}"
    );
    assert!(s.out.join("evil").exists() && s.ws.join(".cn-run/earlier/evil").exists());
}
