//! Third round (issue 29, untried classes): hard links. `protected_hardlinks` lets a user
//! link a file it owns (root: any root-owned file, `/etc/passwd` too), so a contained
//! command tries to link into the workspace a file outside it (the runner's, in a place
//! outside every temporary folder), a credential of `$HOME`, the workspace's own
//! `.git/config` and a hook sample, a file of the host's `/tmp`, and then writes through
//! each link by Bash, Write, Edit and MultiEdit, and reads each by Read and
//! UploadArtifact. The workspace and its `.git` are mounts of their own in the sandbox, so
//! every link out of them fails (`EXDEV`) or finds nothing; a link inside the workspace
//! works (the payload can succeed). Shown by effects: the outside file, `.git/config` and
//! the hook are byte for byte as they were, no credential is in any output, no planted hook
//! ran. As root and as `nobody`. The control runs the same payload uncontained
//! (`sandbox: off`): the outside file is linked and written through.

use std::path::Path;

use serde_json::{Value, json};

use super::containment_scene::{CREDENTIALS, Scene, User, bash, user_available, write};
use crate::support::runner::git_init;

const OUTSIDE_TEXT: &str = "outside original\n";

fn tool(name: &str, args: &Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// The workspace (a repository with a hook that would write a marker if run) and the
/// outside file.
fn plant(s: &Scene) {
    std::fs::write(s.ws.join("a.txt"), "alpha\n").unwrap();
    git_init(&s.ws);
    let hook = s.ws.join(".git/hooks/pre-commit.sample");
    let marker = s.outside.join("hook-ran");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::write(s.outside.join("target.txt"), OUTSIDE_TEXT).unwrap();
}

/// Every link the payload tries: (name in the workspace, source).
fn sources(s: &Scene) -> Vec<(String, String)> {
    let mut v = vec![
        (
            "out".to_owned(),
            format!("{}/target.txt", s.outside.display()),
        ),
        ("gitconfig".to_owned(), ".git/config".to_owned()),
        ("hook".to_owned(), ".git/hooks/pre-commit.sample".to_owned()),
        ("head".to_owned(), ".git/HEAD".to_owned()),
        ("passwd".to_owned(), "/etc/passwd".to_owned()),
        ("hosts".to_owned(), "/etc/hosts".to_owned()),
    ];
    for (i, (path, _)) in CREDENTIALS.iter().enumerate() {
        v.push((format!("cred{i}"), format!("{}/{path}", s.home.display())));
    }
    v
}

fn calls(s: &Scene) -> Vec<Value> {
    let links: Vec<String> = sources(s)
        .iter()
        .map(|(name, src)| format!("ln '{src}' {name} 2>&1 && echo linked-{name}"))
        .collect();
    let mut calls = vec![
        bash(&format!(
            "{}; ln a.txt inside && echo linked-inside; echo tried",
            links.join("; ")
        )),
        bash("for f in out gitconfig hook head; do echo PWNED-BASH >> $f 2>&1; done; echo wrote"),
    ];
    for (name, _) in sources(s).iter().take(4) {
        calls.extend([
            tool("Read", &json!({"filepath": name})),
            tool("UploadArtifact", &json!({"filePath": name})),
            tool(
                "Edit",
                &json!({"file_path": name, "old_string": "original", "new_string": "PWNED-EDIT"}),
            ),
            write(name, "PWNED-WRITE\n"),
        ]);
    }
    calls.push(bash("git status --short >/dev/null 2>&1; echo statused"));
    calls
}

/// The text of `p`, empty when it cannot be read.
fn text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn no_hard_link_reaches_out_of_the_workspace_or_into_git() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        plant(&s);
        let config = text(&s.ws.join(".git/config"));
        let hook = text(&s.ws.join(".git/hooks/pre-commit.sample"));
        let r = s.run(&calls(&s), "");
        assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
        let out = s.tool_outputs();
        assert!(out.contains("linked-inside"), "{user:?}: ln works\n{out}");
        assert!(out.contains("statused"), "{user:?}: {out}");
        for (name, _) in sources(&s) {
            assert!(
                !out.contains(&format!("linked-{name}\n")),
                "{user:?}: {name}\n{out}"
            );
        }
        assert_eq!(
            text(&s.outside.join("target.txt")),
            OUTSIDE_TEXT,
            "{user:?}"
        );
        assert_eq!(text(&s.ws.join(".git/config")), config, "{user:?}");
        assert_eq!(
            text(&s.ws.join(".git/hooks/pre-commit.sample")),
            hook,
            "{user:?}"
        );
        assert!(!s.outside.join("hook-ran").exists(), "{user:?}");
        let secrets: Vec<&str> = CREDENTIALS.iter().map(|c| c.1).collect();
        s.assert_in_no_output(&secrets, &r);
    }
}

#[test]
fn control_uncontained_the_outside_file_is_linked_and_written_through() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    plant(&s);
    let r = s.run(&calls(&s), "tools: {bash: {sandbox: off}}\n");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    assert!(out.contains("linked-out\n"), "{out}");
    assert!(
        text(&s.outside.join("target.txt")).contains("PWNED-BASH"),
        "{out}"
    );
}

/// Hard links into `.git` made before the run (by an earlier step of the workflow): the
/// workspace's `cfg` is `.git/config`, `hk` is `.git/hooks/pre-commit`. A contained
/// command writes through them (the same file: the write lands in `.git`, as its own `cat`
/// of `.git/config` shows), planting `core.fsmonitor` and a hook that write a marker.
/// When the run ends `.git` is put back: the workflow's next `git status` and `git commit`
/// run neither. As root and as `nobody`.
#[test]
fn hard_links_into_git_made_before_the_run_are_undone_when_it_ends() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        plant(&s);
        let git = s.ws.join(".git");
        std::fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::hard_link(git.join("config"), s.ws.join("cfg")).unwrap();
        std::fs::hard_link(git.join("hooks/pre-commit"), s.ws.join("hk")).unwrap();
        let config = text(&git.join("config"));
        let marker = s.outside.join("hook-ran");
        let m = marker.display();
        let calls = vec![
            bash(&format!(
                "printf '[core]\\n\\tfsmonitor = touch {m}.fsmonitor\\n' >> cfg; \
                 printf '#!/bin/sh\\ntouch {m}\\n' > hk; cat .git/config .git/hooks/pre-commit"
            )),
            write("b.txt", "bravo\n"),
        ];
        let r = s.run(&calls, "");
        assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
        let out = s.tool_outputs();
        assert!(
            out.contains("fsmonitor = touch"),
            "{user:?}: the payload wrote through\n{out}"
        );
        assert_eq!(text(&git.join("config")), config, "{user:?}");
        for args in [&["status"][..], &["add", "-A"], &["commit", "-qm", "next"]] {
            let _ = std::process::Command::new("git")
                .args([
                    "-c",
                    "safe.directory=*",
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                ])
                .args(args)
                .current_dir(&s.ws)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output();
        }
        assert!(!marker.exists(), "{user:?}: the planted hook ran");
        let fsmonitor = s.outside.join("hook-ran.fsmonitor");
        assert!(!fsmonitor.exists(), "{user:?}: the planted fsmonitor ran");
    }
}
