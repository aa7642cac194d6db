//! Second red-team round (issue 29, cn-run's own file tools' view): what a contained command
//! cannot see although cn-run's process can, read under auto mode (which answers every
//! ordinary ask, reads outside the workspace included):
//! - the host's temporary folders (`/tmp`, `/var/tmp`, `/dev/shm`): a contained command has
//!   private, empty ones, yet another job's or the runner's files lie in the host's; by
//!   path, by `//` and `..` spellings, through a workspace link, through `/proc/self/root`,
//!   with Read, List, Search and UploadArtifact — as root and as an ordinary user;
//! - as root, another user's `0600` file and a file in another user's `0700` folder: a
//!   contained root command holds no `CAP_DAC_*` and cannot read them; Read, List, Search
//!   (also of a folder above them, whose walk reaches them) and UploadArtifact.
//!
//! Each run first shows the baseline: the same files by a contained `cat` print nothing.
//! The planted values are in no output (stdout, stderr, events, session, artifacts). The
//! control: rules naming those folders let the same calls read them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available};

const TEMP_SECRET: &str = "HOST-TEMP-SECRET-5e71";
const OTHER_SECRET: &str = "OTHER-USER-SECRET-93c2";

/// The planted files: one folder in each host temporary folder, another user's files.
struct Planted {
    temps: Vec<tempfile::TempDir>,
    /// Another user's `0600` file and `0700` folder (root's scene only), under `outside`.
    other_file: PathBuf,
    other_dir: PathBuf,
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

fn plant(s: &Scene) -> Planted {
    let temps: Vec<tempfile::TempDir> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(|d| {
            let t = tempfile::Builder::new()
                .prefix("cn-run-rt2-")
                .tempdir_in(d)
                .unwrap();
            mode(t.path(), 0o755);
            let f = t.path().join("secret.txt");
            std::fs::write(&f, format!("token {TEMP_SECRET}\n")).unwrap();
            mode(&f, 0o644);
            t
        })
        .collect();
    let other_file = s.outside.join("other-user.txt");
    let other_dir = s.outside.join("other-home");
    std::fs::write(&other_file, format!("token {OTHER_SECRET}\n")).unwrap();
    std::fs::create_dir_all(&other_dir).unwrap();
    std::fs::write(other_dir.join("notes.txt"), format!("{OTHER_SECRET}\n")).unwrap();
    mode(&other_dir.join("notes.txt"), 0o644);
    mode(&other_file, 0o600);
    mode(&other_dir, 0o700);
    for p in [&other_file, &other_dir] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    Planted {
        temps,
        other_file,
        other_dir,
    }
}

fn read(p: &str) -> Value {
    json!({"name": "Read", "arguments": {"filepath": p}})
}
fn list(p: &str) -> Value {
    json!({"name": "List", "arguments": {"dirpath": p}})
}
fn search(p: &str) -> Value {
    json!({"name": "Search", "arguments": {"pattern": "SECRET", "path": p}})
}
fn upload(p: &str) -> Value {
    json!({"name": "UploadArtifact", "arguments": {"filePath": p}})
}

/// The calls for the host's temporary folders (every user).
fn temp_calls(p: &Planted) -> Vec<Value> {
    let dirs: Vec<String> = p
        .temps
        .iter()
        .map(|t| t.path().display().to_string())
        .collect();
    let tmp = &dirs[0];
    let name = Path::new(tmp).file_name().unwrap().to_string_lossy();
    let mut calls = vec![bash(&format!(
        "cat {tmp}/secret.txt {}/secret.txt {}/secret.txt; ln -s {tmp} t; ln -s /tmp tt; echo linked",
        dirs[1], dirs[2]
    ))];
    for d in &dirs {
        calls.push(read(&format!("{d}/secret.txt")));
        calls.push(list(d));
        calls.push(search(d));
        calls.push(upload(&format!("{d}/secret.txt")));
    }
    calls.extend([
        read(&format!("//tmp/./{name}/../{name}/secret.txt")),
        read("t/secret.txt"),
        read(&format!("tt/{name}/secret.txt")),
        read(&format!("/proc/self/root{tmp}/secret.txt")),
        read(&format!("/var/../tmp/{name}/secret.txt")),
        search("t"),
        upload("t/secret.txt"),
        list("/tmp"),
    ]);
    calls
}

/// The calls for another user's files (root only).
fn other_user_calls(s: &Scene, p: &Planted) -> Vec<Value> {
    let (file, dir) = (p.other_file.display(), p.other_dir.display());
    vec![
        bash(&format!("cat {file} {dir}/notes.txt; echo tried")),
        read(&file.to_string()),
        read(&format!("{dir}/notes.txt")),
        read("../outside/other-home/notes.txt"),
        list(&dir.to_string()),
        search(&dir.to_string()),
        search(&s.outside.display().to_string()),
        upload(&file.to_string()),
        upload(&format!("{dir}/notes.txt")),
    ]
}

fn tool_output_has(s: &Scene, text: &str) -> bool {
    s.tool_outputs().contains(text)
}

#[test]
fn the_file_tools_read_nothing_a_contained_command_cannot_see() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        let p = plant(&s);
        let mut calls = temp_calls(&p);
        if user == User::Root {
            calls.extend(other_user_calls(&s, &p));
        }
        let r = s.run(&calls, "");
        assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
        assert!(tool_output_has(&s, "linked"), "{}", s.transcript(&r));
        s.assert_in_no_output(&[TEMP_SECRET, OTHER_SECRET], &r);
        let denials = r.result()["permission_denials"].to_string();
        assert!(denials.contains("tool.unseen_by_commands"), "{denials}");
    }
}

#[test]
fn control_rules_naming_the_folders_let_the_same_calls_read_them() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let p = plant(&s);
    let mut folders: Vec<String> = p
        .temps
        .iter()
        .map(|t| t.path().display().to_string())
        .collect();
    folders.extend(["/tmp".to_owned(), s.outside.display().to_string()]);
    let rules: Vec<String> = folders
        .iter()
        .flat_map(|d| ["Read", "List", "Search", "UploadArtifact"].map(|t| format!("{t}({d}/**)")))
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for rule in &rules {
        args.extend(["--allow", rule]);
    }
    let mut calls = temp_calls(&p);
    calls.extend(other_user_calls(&s, &p));
    let r = s.run_with(&calls, "", &args);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    // The contained `cat` saw neither (the baseline), the named tools read both.
    assert!(out.contains(TEMP_SECRET), "{out}");
    assert!(out.contains(OTHER_SECRET), "{out}");
    let cat = out.split("linked").next().unwrap_or_default();
    assert!(
        !cat.contains(TEMP_SECRET),
        "the contained cat read the host /tmp: {cat}"
    );
}
