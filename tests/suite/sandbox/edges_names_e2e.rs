//! Third round (issue 29, untried classes): odd names aimed at the file tools, the
//! checkpointer, diff.patch and rollback. A name with a newline followed by a patch header
//! (`evil\n+++ b/.git/hooks/post-checkout`, a folder holding its own `.git/hooks`), bytes
//! that are not UTF-8, NFC and NFD twins of one name, `..\u{2024}` and `\u{2024}\u{2024}`
//! folders (one-dot leaders that look like `..`), a 255-byte name, names git quotes
//! (quotes, backslash, tab, a leading dash, `$(...)` and backticks that would run if
//! anything put them in a shell). Made by Bash and by Write, then read by Read, List,
//! Search and Edit. Shown by effects: nothing written outside the workspace, no `$(...)`
//! ran, no planted hook ran; diff.patch names every file (so the checkpointer saw them) and
//! `git apply` of it on the start gives the same files, none under a `.git`; a rollback
//! brings the workspace back to its start. As root and as `nobody`.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available, write};
use crate::support::runner::{cn_run, git_init, run};

fn tool(name: &str, args: &Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// Names the Write tool makes (valid UTF-8).
fn written() -> Vec<String> {
    vec![
        "caf\u{e9}.txt".into(),
        "cafe\u{301}.txt".into(),
        "..\u{2024}/y.txt".into(),
        "\u{2024}\u{2024}/x.txt".into(),
        "\"quoted\".txt".into(),
        "back\\slash.txt".into(),
        "tab\there.txt".into(),
        "-rf".into(),
        "--output=pwned-opt".into(),
        "$(touch pwned-subst)".into(),
        "`touch pwned-tick`".into(),
        " lead space".into(),
        "x".repeat(255),
    ]
}

/// A shell command that makes the names Write cannot (bytes, newlines) with a hook that
/// would write `marker` if git ever ran it.
fn made_by_bash(marker: &Path) -> String {
    let m = marker.display();
    [
        "printf 'bad bytes\\n' > \"$(printf 'bad\\377\\376.txt')\"".to_owned(),
        "d=\"$(printf 'evil\\n+++ b')\"; mkdir -p \"$d/.git/hooks\" && \
         printf '#!/bin/sh\\ntouch %s\\n' > \"$d/.git/hooks/post-checkout\" && \
         chmod +x \"$d/.git/hooks/post-checkout\""
            .replace("%s", &m.to_string()),
        "printf 'nl\\n' > \"$(printf 'new\\nline.txt')\"".to_owned(),
        "echo made".to_owned(),
    ]
    .join("; ")
}

fn calls(marker: &Path) -> Vec<Value> {
    let mut calls = vec![bash(&made_by_bash(marker))];
    for name in written() {
        calls.push(write(&name, &format!("content of {name}\n")));
        calls.push(tool("Read", &json!({"filepath": name})));
    }
    calls.extend([
        tool("List", &json!({"dirpath": "."})),
        tool("Search", &json!({"pattern": "content", "path": "."})),
        tool(
            "Edit",
            &json!({"file_path": "cafe\u{301}.txt", "old_string": "content", "new_string": "edited"}),
        ),
        bash("echo changed > a.txt; ls | wc -l"),
    ]);
    calls
}

/// The workspace's files (relative, as bytes), `.git` left out.
fn files(dir: &Path) -> BTreeSet<Vec<u8>> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p == dir.join(".git") {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().as_os_str().to_owned();
            match p.is_dir() && !p.is_symlink() {
                true => stack.push(p),
                false => {
                    found.insert(rel.into_vec());
                }
            }
        }
    }
    found
}

/// Every file named `name` beneath `dir`.
fn anywhere(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_name() == *name {
                hits.push(e.path());
            }
            if e.path().is_dir() && !e.path().is_symlink() {
                stack.push(e.path());
            }
        }
    }
    hits
}

fn git_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "core.quotepath=true"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap()
}

#[test]
fn odd_names_reach_nothing_outside_and_round_trip_through_diff_and_rollback() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        std::fs::write(s.ws.join("a.txt"), "alpha\n").unwrap();
        git_init(&s.ws);
        let marker = s.outside.join("hook-ran");
        let r = s.run(&calls(&marker), "");
        assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
        let out = s.tool_outputs();
        assert!(out.contains("made"), "{user:?}: {out}");
        s.assert_nothing_outside(&r);
        for pwned in ["pwned-subst", "pwned-tick", "pwned-opt"] {
            assert!(anywhere(&s.out, pwned).is_empty(), "{user:?}: {pwned}");
            let hits = anywhere(&s.ws, pwned);
            assert!(hits.is_empty(), "{user:?}: {pwned} ran: {hits:?}");
        }
        let now = files(&s.ws);
        for name in written() {
            assert!(
                now.contains(name.as_bytes()),
                "{user:?}: {name} not made\n{out}"
            );
        }
        // diff.patch applied on the start gives the same files, none under a `.git`.
        let patch = s.out.join("diff.patch");
        let text = std::fs::read(&patch).unwrap();
        let clone = tempfile::tempdir().unwrap();
        let c = clone.path().join("c");
        std::fs::create_dir_all(&c).unwrap();
        let archive = git_in(&s.ws, &["archive", "--format=tar", "HEAD"]);
        let mut tar = Command::new("tar")
            .args(["-x", "-C"])
            .arg(&c)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
        assert!(tar.wait().unwrap().success());
        assert!(git_in(&c, &["init", "-q"]).status.success());
        let applied = git_in(&c, &["apply", &patch.display().to_string()]);
        assert!(
            applied.status.success(),
            "{user:?}: {applied:?}\n{}",
            String::from_utf8_lossy(&text)
        );
        assert!(!marker.exists(), "{user:?}: a planted hook ran");
        let mut expected = now.clone();
        // The nested `.git` is no file of the tree; `.cn-run` is the run's own folder.
        expected.retain(|f| !f.windows(6).any(|w| w == b"/.git/") && !f.starts_with(b".cn-run/"));
        let got = files(&c);
        assert_eq!(
            got,
            expected,
            "{user:?}: {}",
            String::from_utf8_lossy(&text)
        );
        if user == User::Root {
            roll_back(&s, &r);
        }
    }
}

/// `cn-run rollback` to the start: only `a.txt` as committed (and what the checkpoints
/// could not hold: the folder with its own `.git`) is left.
fn roll_back(s: &Scene, r: &crate::support::runner::Run) {
    let id = r.result()["session_id"].as_str().unwrap().to_owned();
    let mut cmd = cn_run(&s.ws);
    cmd.args(["rollback", &id, "-C"]).arg(&s.ws);
    let rolled = run(cmd, None);
    assert_eq!(rolled.code, 0, "{rolled:#?}");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    let left: Vec<String> = files(&s.ws)
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .filter(|f| f != "a.txt" && !f.contains("/.git/") && !f.starts_with(".cn-run/"))
        .collect();
    assert!(left.is_empty(), "left after rollback: {left:?}");
    assert!(!s.outside.join("hook-ran").exists());
}
