//! Third round (issue 29, the checkpointer's view): what a contained command cannot read
//! stays out of `.git`. As root, cn-run's checkpointer had cn-run's own rights: another
//! user's `0600` file in the workspace (not ignored) went into the checkpoint objects in
//! `.git`, which commands can read, though a contained root command could not read the
//! file itself. Planted in the workspace as uid 4242: a `0600` file, files in a `0700`
//! folder (one nested deeper), a `0640` file of the user's own group, a tracked file
//! rewritten `0600`, a `0600` file with a tab in its name, a file in a `0711` folder; a
//! contained command also renames one. Each run first shows the baseline (a contained `cat`
//! prints none of them); the file tools asked for them inside the workspace are refused.
//! None is in any object of `.git` (`git cat-file --batch-all-objects`), in diff.patch or
//! in the run folder; the run warns with their count; a rollback leaves each byte for byte.
//! Controls in the same run: the same user's `0644` file and a file in its `0755` folder,
//! root's own `0600` file, a `0640` file of group 0 are snapshotted. As root and as
//! `nobody` (whose checkpointer never could read them).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available, write};
use crate::support::runner::{Run, cn_run, git_init, run};

/// The other user's id: it need not exist.
const OTHER: u32 = 4242;

/// (path, content, mode, group 0?) of the files closed to contained commands; folders
/// (path, mode) above them are made first.
const CLOSED_DIRS: &[(&str, u32)] = &[("closed", 0o700), ("closed/deep", 0o755), ("nolist", 0o711)];
const SECRETS: &[(&str, &str, u32)] = &[
    ("secret.txt", "CLOSED-SECRET-0600-a1", 0o600),
    ("closed/notes.txt", "CLOSED-SECRET-0700-b2", 0o644),
    ("closed/deep/more.txt", "CLOSED-SECRET-deep-c3", 0o644),
    ("group.txt", "CLOSED-SECRET-group-d4", 0o640),
    ("config.txt", "CLOSED-SECRET-tracked-e5", 0o600),
    ("odd\tname.txt", "CLOSED-SECRET-tab-f6", 0o600),
    ("nolist/s.txt", "CLOSED-SECRET-0711-g7", 0o600),
    ("to-move.txt", "CLOSED-SECRET-moved-h8", 0o600),
];
/// The same user's files a contained command can read: snapshotted.
const OPEN: &[(&str, &str, u32)] = &[
    ("open.txt", "OPEN-MARK-0644-1", 0o644),
    ("shared/notes.txt", "OPEN-MARK-0755-2", 0o644),
];

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// A committed workspace (with `config.txt` public), then the planted files.
fn plant(s: &Scene, root: bool) {
    std::fs::write(s.ws.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(s.ws.join("config.txt"), "public config\n").unwrap();
    git_init(&s.ws);
    for (dir, _) in CLOSED_DIRS {
        std::fs::create_dir_all(s.ws.join(dir)).unwrap();
    }
    std::fs::create_dir_all(s.ws.join("shared")).unwrap();
    for (path, content, m) in SECRETS.iter().chain(OPEN) {
        std::fs::write(s.ws.join(path), format!("token {content}\n")).unwrap();
        mode(&s.ws.join(path), *m);
    }
    if root {
        std::fs::write(s.ws.join("root-own.txt"), "ROOT-MARK-0600-3\n").unwrap();
        mode(&s.ws.join("root-own.txt"), 0o600);
        std::fs::write(s.ws.join("group0.txt"), "GROUP0-MARK-0640-4\n").unwrap();
        mode(&s.ws.join("group0.txt"), 0o640);
    }
}

/// Gives the planted files to the other user (after the scene gave everything to the
/// runner), folders last so the files can still be reached.
fn hand_over(s: &Scene, root: bool) {
    let own = |p: &str, gid: u32| std::os::unix::fs::chown(s.ws.join(p), Some(OTHER), Some(gid));
    for (path, ..) in SECRETS.iter().chain(OPEN) {
        own(path, OTHER).unwrap();
    }
    for (dir, m) in CLOSED_DIRS {
        own(dir, OTHER).unwrap();
        mode(&s.ws.join(dir), *m);
    }
    own("shared", OTHER).unwrap();
    if root {
        own("group0.txt", 0).unwrap();
    }
}

fn tool(name: &str, args: &Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// The model's calls: the contained baseline, the file tools on the closed files, changes
/// to other files, a rename of one closed file.
fn calls() -> Vec<Value> {
    let cats: Vec<String> = SECRETS.iter().map(|(p, ..)| format!("'{p}'")).collect();
    vec![
        bash(&format!(
            "cat {} 2>&1; ls closed 2>&1; echo tried",
            cats.join(" ")
        )),
        tool("Read", &json!({"filepath": "secret.txt"})),
        tool("Read", &json!({"filepath": "closed/notes.txt"})),
        tool("Read", &json!({"filepath": "config.txt"})),
        tool("Search", &json!({"pattern": "CLOSED", "path": "."})),
        tool("List", &json!({"dirpath": "closed"})),
        tool("UploadArtifact", &json!({"filePath": "group.txt"})),
        tool(
            "Edit",
            &json!({"file_path": "config.txt", "old_string": "token", "new_string": "t"}),
        ),
        bash("echo changed > a.txt; mv to-move.txt moved.txt; echo renamed"),
        write("b.txt", "bravo\n"),
        bash("echo more >> open.txt 2>&1; echo appended"),
    ]
}

/// Every object in the workspace's `.git`, printed.
fn all_objects(ws: &Path) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "cat-file",
            "--batch-all-objects",
            "--batch",
        ])
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stdout, stderr and every file of the run folder.
fn run_outputs(s: &Scene, r: &Run) -> String {
    let mut text = format!("{}\n{}\n", r.stdout, r.stderr);
    let mut stack = vec![s.out.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.path().is_dir() {
                true => stack.push(e.path()),
                false => text.push_str(&String::from_utf8_lossy(
                    &std::fs::read(e.path()).unwrap_or_default(),
                )),
            }
        }
    }
    text
}

/// The run as `user`, its planted files handed over; None when it cannot run here.
fn ran(user: User) -> Option<(Scene, Run)> {
    if !user_available(user) {
        return None;
    }
    let root = user == User::Root;
    let s = Scene::for_user(user, &[]);
    plant(&s, root);
    let turns = calls()
        .into_iter()
        .map(|c| json!({"tool_calls": [c]}))
        .collect();
    let cmd = s.command(turns, "", &[]);
    hand_over(&s, root);
    let r = run(cmd, Some(&s.out));
    assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
    let out = s.tool_outputs();
    for mark in ["tried", "renamed", "appended"] {
        assert!(out.contains(mark), "{user:?}: {mark} missing\n{out}");
    }
    Some((s, r))
}

fn path_of(p: &str) -> &str {
    if p == "to-move.txt" { "moved.txt" } else { p }
}

#[test]
fn no_file_closed_to_contained_commands_reaches_git_or_any_output() {
    for user in [User::Root, User::Nobody] {
        let Some((s, r)) = ran(user) else {
            continue;
        };
        let objects = all_objects(&s.ws);
        let outputs = run_outputs(&s, &r);
        let patch = std::fs::read_to_string(s.out.join("diff.patch")).unwrap_or_default();
        assert!(
            patch.contains("+changed"),
            "{user:?}: the diff holds the change\n{patch}"
        );
        for (_, secret, _) in SECRETS {
            assert!(!objects.contains(secret), "{user:?}: {secret} in .git");
            assert!(!outputs.contains(secret), "{user:?}: {secret} in an output");
        }
        // The baseline: a contained command could read none of them.
        let tools = s.tool_outputs();
        assert!(!tools.contains("CLOSED-SECRET"), "{user:?}: {tools}");
        if user == User::Root {
            let denials = r.result()["permission_denials"].to_string();
            assert!(denials.contains("tool.unseen_by_commands"), "{denials}");
            let warned = r.result()["warnings"].to_string();
            assert!(warned.contains("closed to contained commands"), "{warned}");
        }
    }
}

#[test]
fn control_what_a_contained_command_can_read_is_snapshotted() {
    for user in [User::Root, User::Nobody] {
        let Some((s, _r)) = ran(user) else {
            continue;
        };
        let objects = all_objects(&s.ws);
        for (_, mark, _) in OPEN {
            assert!(objects.contains(mark), "{user:?}: {mark} not snapshotted");
        }
        if user == User::Root {
            for mark in ["ROOT-MARK-0600-3", "GROUP0-MARK-0640-4"] {
                assert!(objects.contains(mark), "{mark} not snapshotted");
            }
        }
    }
}

#[test]
fn a_rollback_leaves_every_closed_file_as_it_was() {
    let Some((s, r)) = ran(User::Root) else {
        return;
    };
    let id = r.result()["session_id"].as_str().unwrap().to_owned();
    let mut cmd = cn_run(&s.ws);
    cmd.args(["rollback", &id, "-C"]).arg(&s.ws);
    let rolled = run(cmd, None);
    assert_eq!(rolled.code, 0, "{rolled:#?}");
    // The rollback ran: the run's changes are gone.
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert!(!s.ws.join("b.txt").exists());
    for (path, secret, m) in SECRETS {
        let p = s.ws.join(path_of(path));
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert_eq!(text, format!("token {secret}\n"), "{path}");
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, *m, "{path}");
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), OTHER, "{path}");
    }
}
