//! `.git` is the run's: the file tools refuse it in every spelling without a rule that
//! names it (even under `--auto`), and whatever a run plants there — a hook, an
//! fsmonitor, a filter driver, `core.worktree`, object alternates — by a command with the
//! sandbox off is put back when the run ends, said in result.json's warnings, so the
//! workflow's next `git status` runs nothing and a rollback deletes nothing outside. The
//! controls: the same plant run by hand makes `git status` run it (and `core.worktree`
//! send git to the outside folder); a rule naming `.git` lets the file tools write there.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::runner::{cn_run, git, git_init, run, write_files};

fn script(calls: &[Value]) -> String {
    json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}).to_string()
}

fn job(ws: &Path, extra: &str, calls: &[Value]) {
    let job = format!(
        "version: 1\nname: git\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\n{extra}"
    );
    write_files(ws, &[("job.yaml", &job), ("s.json", &script(calls))]);
}

/// A committed repository in `<tmp>/ws` (the job files ignored) and a folder beside it.
fn repo() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "outside file\n").unwrap();
    write_files(
        &ws,
        &[
            ("a.txt", "one\n"),
            (".gitignore", "out/\njob.yaml\ns.json\nplant.sh\n"),
        ],
    );
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    git_init(&ws.join("sub"));
    git_init(&ws);
    (tmp, ws, outside)
}

/// Runs plain `git status` in `ws` as a workflow's next step would (the machine's git).
fn workflow_git_status(ws: &Path) {
    let _ = std::process::Command::new("git")
        .arg("status")
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
}

const HOOK: &str = "#!/bin/sh\ntouch \"$MARK\"\n";

fn write(path: &str, content: &str) -> Value {
    json!({"name": "Write", "arguments": {"filepath": path, "content": content}})
}

#[test]
fn the_file_tools_refuse_git_in_every_spelling_without_a_rule_naming_it() {
    let auto = "permissions: {allow: ['Write(**)', 'Edit(**)', 'Read(**)']}\n";
    refused_in_every_spelling(auto, &["--auto"]);
    // `on_ask: allow` answers asks, but a call into `.git` needs a rule naming it.
    refused_in_every_spelling("permissions: {on_ask: allow}\n", &[]);
}

fn refused_in_every_spelling(permissions: &str, flags: &[&str]) {
    let (_tmp, ws, _) = repo();
    std::os::unix::fs::symlink(ws.join(".git"), ws.join("g")).unwrap();
    let abs = ws
        .join(".git/hooks/post-index-change")
        .display()
        .to_string();
    let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    let calls = vec![
        write(".git/hooks/post-checkout", HOOK),
        write("./.git/hooks/pre-commit", HOOK),
        write("a/../.git/hooks/pre-push", HOOK),
        write(".git/./hooks/pre-rebase", HOOK),
        write(".git//hooks/post-merge", HOOK),
        write("g/hooks/post-commit", HOOK),
        write(&abs, HOOK),
        write("sub/.git/hooks/post-checkout", HOOK),
        write(".git/info/attributes", "* filter=evil\n"),
        json!({"name": "Read", "arguments": {"filepath": ".git/config"}}),
        json!({"name": "Edit", "arguments": {"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch /tmp/x"}}),
        json!({"name": "Edit", "arguments": {"file_path": "g/config", "old_string": "[core]", "new_string": "[core]\n\thooksPath = /tmp"}}),
        json!({"name": "UploadArtifact", "arguments": {"filePath": ".git/config.txt"}}),
    ];
    let n = calls.len();
    job(&ws, permissions, &calls);
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").args(flags);
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let denials = r.result()["permission_denials"].as_array().unwrap().clone();
    let session = std::fs::read_to_string(ws.join("out/session.jsonl")).unwrap();
    assert_eq!(denials.len(), n, "{session}");
    for hook in [
        "post-checkout",
        "pre-commit",
        "pre-push",
        "pre-rebase",
        "post-merge",
        "post-commit",
        "post-index-change",
    ] {
        assert!(
            !ws.join(".git/hooks").join(hook).exists(),
            "{hook} was written"
        );
    }
    assert!(!ws.join("sub/.git/hooks/post-checkout").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config
    );
    // The control: a rule that names .git lets the write through (and the run puts it
    // back when it ends, saying so).
    let (_tmp2, ws2, _) = repo();
    job(
        &ws2,
        "permissions: {allow: ['Write(.git/**)']}\n",
        &[write(".git/hooks/post-checkout", HOOK)],
    );
    let mut cmd = cn_run(&ws2);
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&ws2.join("out")));
    let session = std::fs::read_to_string(ws2.join("out/session.jsonl")).unwrap();
    assert!(
        session.contains("Created .git/hooks/post-checkout"),
        "{session}"
    );
    assert!(
        r.result()["warnings"]
            .to_string()
            .contains("hooks/post-checkout was changed during the run"),
        "{r:#?}"
    );
    assert!(!ws2.join(".git/hooks/post-checkout").exists());
}

/// What `plant.sh` plants in `.git` (run by the model's Bash with the sandbox off, or
/// by hand for the control).
fn plant_script(mark: &Path, outside: &Path) -> String {
    format!(
        "set -e\n\
         printf '#!/bin/sh\\ntouch {m}.hook\\n' > .git/hooks/post-checkout\n\
         printf '#!/bin/sh\\ntouch {m}.index\\n' > .git/hooks/post-index-change\n\
         chmod +x .git/hooks/*\n\
         git config core.fsmonitor 'touch {m}.fsmonitor; false'\n\
         git config filter.evil.clean 'touch {m}.filter; cat'\n\
         printf '*.txt filter=evil\\n' > .git/info/attributes\n\
         mkdir -p .git/objects/info && echo /nonexistent/objects > .git/objects/info/alternates\n\
         git config core.worktree '{o}'\n",
        m = mark.display(),
        o = outside.display()
    )
}

#[test]
fn what_a_run_plants_in_git_is_put_back_when_it_ends() {
    let (_tmp, ws, outside) = repo();
    let mark = ws.parent().unwrap().join("mark");
    write_files(&ws, &[("plant.sh", &plant_script(&mark, &outside))]);
    let config = std::fs::read(ws.join(".git/config")).unwrap();
    let calls = vec![
        json!({"name": "Bash", "arguments": {"command": "sh plant.sh"}}),
        json!({"name": "Write", "arguments": {"filepath": "a.txt", "content": "two\n"}}),
    ];
    // A failing check fails the run, so it rolls back.
    job(
        &ws,
        "tools: {bash: {sandbox: off}}\ngit: {checkpoints: true, rollback_on_failure: true}\nchecks: [{name: fails, run: 'false'}]\n",
        &calls,
    );
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&ws.join("out")));
    assert_ne!(r.code, 0, "{r:#?}");
    let warnings = r.result()["warnings"].to_string();
    for planted in [
        "hooks/post-checkout",
        "/config",
        "info/attributes",
        "objects/info/alternates",
    ] {
        assert!(warnings.contains(planted), "{planted} not said: {warnings}");
    }
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), config);
    // The rollback stayed in the workspace: the outside folder is whole.
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "outside file\n"
    );
    workflow_git_status(&ws);
    let hits: Vec<_> = std::fs::read_dir(ws.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mark"))
        .collect();
    assert!(
        hits.is_empty(),
        "git status ran what the run planted: {hits:?}"
    );
    // The control: planted by hand, the next git status runs it.
    let (_tmp2, ws2, outside2) = repo();
    let mark2 = ws2.parent().unwrap().join("mark");
    write_files(&ws2, &[("plant.sh", &plant_script(&mark2, &outside2))]);
    let planted = std::process::Command::new("sh")
        .arg("plant.sh")
        .current_dir(&ws2)
        .output()
        .unwrap();
    assert!(planted.status.success(), "{planted:?}");
    workflow_git_status(&ws2);
    assert!(
        ws2.parent().unwrap().join("mark.fsmonitor").exists(),
        "the control's fsmonitor did not run"
    );
    let listed = git(
        &ws2,
        &[
            "-c",
            "core.fsmonitor=false",
            "status",
            "--porcelain",
            "--untracked-files=all",
        ],
    );
    assert!(
        listed.contains("keep.txt"),
        "core.worktree did not send git outside: {listed}"
    );
}

#[test]
fn a_rollback_never_follows_a_git_pointer_the_run_put_in_place_of_git() {
    let (_tmp, ws, outside) = repo();
    std::fs::write(outside.join("precious.txt"), "precious\n").unwrap();
    // The run copies .git, points the copy's work tree outside, and replaces .git with a
    // `gitdir:` pointer to the copy.
    let plant = format!(
        "cp -r .git fake && git --git-dir=fake config core.worktree '{}' && rm -rf .git && printf 'gitdir: fake\\n' > .git",
        outside.display()
    );
    write_files(&ws, &[("plant.sh", &plant)]);
    let calls = vec![
        json!({"name": "Write", "arguments": {"filepath": "a.txt", "content": "two\n"}}),
        json!({"name": "Bash", "arguments": {"command": "sh plant.sh"}}),
    ];
    job(
        &ws,
        "tools: {bash: {sandbox: off}}\ngit: {checkpoints: true, rollback_on_failure: true}\nchecks: [{name: fails, run: 'false'}]\n",
        &calls,
    );
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
        "precious\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "outside file\n"
    );
    let warnings = r.result()["warnings"].to_string();
    assert!(warnings.contains("rollback"), "{warnings}\n{r:#?}");
    // The original .git is gone: the pointer is moved aside and said, so the workflow's
    // next git command does not follow it.
    assert!(warnings.contains("is gone"), "{warnings}");
    assert!(!ws.join(".git").exists());
    // The control: the same plant made by hand in a fresh repository (no cn-run, which
    // also cleans the copy's config as a repository made during the run): git follows
    // the pointer to the outside work tree.
    let (_tmp2, ws2, outside2) = repo();
    std::fs::write(outside2.join("precious.txt"), "precious\n").unwrap();
    let plant2 = plant.replace(
        &outside.display().to_string(),
        &outside2.display().to_string(),
    );
    let planted = std::process::Command::new("sh")
        .args(["-c", &plant2])
        .current_dir(&ws2)
        .status()
        .unwrap();
    assert!(planted.success());
    let listed = git(&ws2, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(listed.contains("precious.txt"), "{listed}");
}
