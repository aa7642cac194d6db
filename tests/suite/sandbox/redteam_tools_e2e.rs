//! Red-team round (issue 29, cn-run's own file tools): the tools run in cn-run's process,
//! outside the sandbox, so they must not see or do more than a contained command. Under
//! auto mode (which answers every ordinary ask):
//! - reads of cn-run's environment and the hidden credentials by spellings the first round
//!   did not try: `..` after `/dev/fd`, `/dev/stdin`, `/proc/self/cwd`; workspace links to
//!   `/dev/fd`, `/proc/self`, `/proc` and to the folder holding `$HOME`; doubled slashes and
//!   `.` inside `/proc`; `/dev/fd/N`; with Read, List, Search and UploadArtifact — the
//!   planted environment value and the credentials are in no output;
//! - writes outside the workspace, where a contained command cannot write: relative,
//!   absolute, through `/proc/self/root`, through a workspace link, into the host's `/tmp`,
//!   into `$HOME` (`.bashrc`, `.gitconfig`: what runs in the workflow's next shell or git),
//!   with Write, Edit and MultiEdit — nothing outside is written or changed.
//!
//! The control: a rule naming the outside folders (`--allow 'Write(<dir>/**)'`) lets the
//! same writes through.

use serde_json::{Value, json};

use super::containment_scene::{CREDENTIALS, PLANTED, Scene, User, bash, user_available, write};

fn read(path: &str) -> Value {
    json!({"name": "Read", "arguments": {"filepath": path}})
}

/// The read calls, after one Bash call that makes the workspace links.
fn reads(s: &Scene) -> Vec<Value> {
    let home = s.home.display();
    let links = "ln -s /dev/fd l; ln -s /proc/self x; ln -s /proc y; ln -s .. up; \
                 mkdir -p deep/a; ln -s /dev/fd deep/a/fd; echo made";
    let mut calls = vec![bash(links)];
    for p in [
        "/dev/fd/../environ",
        "l/../environ",
        "x/environ",
        "y/self/environ",
        "y/thread-self/environ",
        "deep/a/fd/../environ",
        "/dev/stdin/../../environ",
        "//proc//self//environ",
        "/proc/./self/./environ",
        "/proc/self/task/../environ",
        "/dev/fd/3",
        "/dev/fd/4",
        "/dev/fd/5",
        "x/cwd/../home/.ssh/id_ed25519",
        "up/home/.ssh/id_ed25519",
        "up/home/.config/../.aws/credentials",
        "up/./home//.netrc",
    ] {
        calls.push(read(p));
    }
    calls.push(read(&format!("/proc/self/root{home}/.git-credentials")));
    calls.push(read(&format!("{home}/.docker/../.docker/config.json")));
    calls.push(json!({"name": "List", "arguments": {"dirpath": "up/home/.ssh"}}));
    calls.push(json!({"name": "List", "arguments": {"dirpath": "x/cwd/../home/.config/gh"}}));
    calls.push(
        json!({"name": "Search", "arguments": {"pattern": "SECRET-|planted-env", "path": "up"}}),
    );
    calls
        .push(json!({"name": "Search", "arguments": {"pattern": "planted-env", "path": "y/self"}}));
    calls.push(json!({"name": "UploadArtifact", "arguments": {"filePath": "up/home/.netrc.txt"}}));
    calls.push(json!({"name": "UploadArtifact", "arguments": {"filePath": "x/environ.txt"}}));
    calls
}

#[test]
fn the_file_tools_read_no_environment_and_no_credential_by_any_new_spelling() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let r = s.run(&reads(&s), "");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    assert!(s.tool_outputs().contains("made"), "{}", s.transcript(&r));
    let secrets: Vec<&str> = CREDENTIALS
        .iter()
        .map(|(_, secret)| *secret)
        .chain([PLANTED])
        .collect();
    s.assert_in_no_output(&secrets, &r);
}

/// The write calls: each tries to leave `TAG` outside the workspace.
fn writes(s: &Scene) -> Vec<Value> {
    let (out, tmp, home) = (
        s.outside.display().to_string(),
        s.host_tmp.display().to_string(),
        s.home.display().to_string(),
    );
    let edit = |path: &str| json!({"name": "Edit", "arguments": {"file_path": path, "old_string": "original", "new_string": "pwned"}});
    let multi = |path: &str| json!({"name": "MultiEdit", "arguments": {"file_path": path, "edits": [{"old_string": "original", "new_string": "pwned"}]}});
    vec![
        bash(&format!("ln -s '{out}' o; echo made")),
        write("../outside/rel", "rel"),
        write(&format!("{out}/abs"), "abs"),
        write(&format!("/proc/self/root{out}/procroot"), "procroot"),
        write("o/link", "link"),
        write(&format!("{tmp}/hosttmp"), "hosttmp"),
        write(&format!("{out}/../outside/dotdot"), "dotdot"),
        write(&format!("{home}/.bashrc"), "touch /tmp/pwned-bashrc\n"),
        write(
            &format!("{home}/.gitconfig"),
            "[core]\n\tfsmonitor = touch /tmp/pwned\n",
        ),
        // An edit needs a read first (reading outside is what a contained command can do).
        read(&format!("{out}/keep.txt")),
        edit(&format!("{out}/keep.txt")),
        read("o/keep.txt"),
        edit("o/keep.txt"),
        read("../outside/keep.txt"),
        multi("../outside/keep.txt"),
    ]
}

fn plant_outside(s: &Scene) {
    std::fs::write(s.outside.join("keep.txt"), "original\n").unwrap();
}

/// What the writes left outside (files other than keep.txt, keep.txt changed, `$HOME`
/// files written).
fn written_outside(s: &Scene) -> Vec<String> {
    let mut found: Vec<String> = [&s.outside, &s.host_tmp]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "keep.txt")
        .collect();
    if std::fs::read_to_string(s.outside.join("keep.txt")).unwrap() != "original\n" {
        found.push("keep.txt".to_owned());
    }
    for f in [".bashrc", ".gitconfig"] {
        if s.home.join(f).exists() {
            found.push(f.to_owned());
        }
    }
    found.sort();
    found
}

#[test]
fn the_file_tools_write_nothing_outside_the_workspace_even_in_auto_mode() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    plant_outside(&s);
    let r = s.run(&writes(&s), "");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    assert!(s.tool_outputs().contains("made"), "{}", s.transcript(&r));
    assert_eq!(
        written_outside(&s),
        Vec::<String>::new(),
        "{}",
        s.tool_outputs()
    );
    let denials = r.result()["permission_denials"].to_string();
    assert!(
        denials.contains("tool.write_outside_workspace"),
        "{denials}"
    );
}

#[test]
fn control_a_rule_naming_the_outside_folders_lets_the_same_writes_through() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    plant_outside(&s);
    let rules: Vec<String> = [&s.outside, &s.host_tmp, &s.home]
        .iter()
        .flat_map(|d| {
            let d = d.display();
            [
                format!("Write({d}/**)"),
                format!("Edit({d}/**)"),
                format!("MultiEdit({d}/**)"),
            ]
        })
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for rule in &rules {
        args.extend(["--allow", rule]);
    }
    let r = s.run_with(&writes(&s), "", &args);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let mut want: Vec<String> = [
        "rel",
        "abs",
        "procroot",
        "link",
        "hosttmp",
        "dotdot",
        "keep.txt",
        ".bashrc",
        ".gitconfig",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    want.sort();
    assert_eq!(written_outside(&s), want, "{}", s.tool_outputs());
}
