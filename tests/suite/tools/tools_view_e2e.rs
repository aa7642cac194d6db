//! cn-run's file tools see what a contained command sees, through the real binary under
//! `--auto` (where every "needs permission" is allowed, so only refusals hold): cn-run's
//! own environment (`/proc/self/environ` and a dozen other spellings of process files)
//! and the credential locations the sandbox hides (`~/.config/gh`, `~/.ssh`, `~/.aws`,
//! …, by absolute path, relative path, a symlink in the workspace; Read, Search, List,
//! UploadArtifact) appear in no output, and the run's own records are not written. The
//! controls: an outside file that is not a credential is read in the same run, and a job
//! that gives a location back (`tools.bash.readable`) reads it.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::runner::{cn_run, run, write_files};

const ENV_SECRET: &str = "pg-Pa55word-Planted-81c2";
const NOTE: &str = "NOTE-MARKER-plain-outside-file";

/// Credential files under the fake home, each holding its own marker.
const CREDS: &[(&str, &str)] = &[
    (".config/gh/hosts.yml", "gho_HostsYmlTokenPlanted123"),
    (".ssh/id_ed25519", "SSH-KEY-MARKER-0a1b"),
    (".aws/credentials", "AWS-SECRET-MARKER-9z8y"),
    (".netrc", "NETRC-PASS-MARKER-77"),
    (".docker/config.json", "DOCKER-AUTH-MARKER-55"),
    (".git-credentials", "GITCRED-MARKER-31"),
    (".kube/config", "KUBE-TOKEN-MARKER-12"),
];

fn read(path: &str) -> Value {
    json!({"name": "Read", "arguments": {"filepath": path}})
}

/// Every output file of the run and its stdout, as one text.
fn everything(out: &Path, stdout: &str) -> String {
    let mut all = stdout.to_owned();
    for entry in walk(out) {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(entry).unwrap_or_default(),
        ));
    }
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

fn setup(readable: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    // Not under /tmp: the host's temporary folders are closed to the file tools as to
    // commands (redteam2_tools_e2e), and the plain outside file is the control here.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = tmp.path().canonicalize().unwrap();
    crate::support::runner::own_repo_boundary(&root);
    let (ws, home) = (root.join("ws"), root.join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    for (f, secret) in CREDS {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("secret: {secret}\n")).unwrap();
    }
    std::fs::write(home.join("notes.txt"), format!("{NOTE}\n")).unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, ws.join(name)).unwrap();
    link(Path::new("/proc/self/environ"), "penv");
    link(Path::new("/proc/self/environ"), "penv.txt");
    link(Path::new("/proc/self"), "pself");
    link(Path::new("/proc"), "proc");
    link(&home.join(".config/gh"), "gh");
    link(&home.join(".config/gh/hosts.yml"), "hosts.yml");
    link(&home.join(".aws"), "aws");
    link(&home.join("notes.txt"), "notes-link.txt");
    let h = home.display();
    let mut calls: Vec<Value> = [
        "/proc/self/environ".to_owned(),
        "/proc//self/environ".to_owned(),
        "/proc/./self/environ".to_owned(),
        "/proc/self/../self/environ".to_owned(),
        "/proc/thread-self/environ".to_owned(),
        "/proc/self/task/../environ".to_owned(),
        "/proc/self/root/proc/self/environ".to_owned(),
        "../../../../../../../../proc/self/environ".to_owned(),
        "penv".to_owned(),
        "pself/environ".to_owned(),
        "proc/self/environ".to_owned(),
        "/proc/self/cmdline".to_owned(),
        "/sys/kernel/mm/../../../proc/self/environ".to_owned(),
    ]
    .iter()
    .map(|p| read(p))
    .collect();
    for (f, _) in CREDS {
        calls.push(read(&format!("{h}/{f}")));
        calls.push(read(&format!("../home/{f}")));
    }
    calls.extend([
        read("gh/hosts.yml"),
        read("hosts.yml"),
        read("aws/credentials"),
        json!({"name": "Search", "arguments": {"pattern": "secret", "path": format!("{h}/.config")}}),
        json!({"name": "Search", "arguments": {"pattern": "secret", "path": "gh"}}),
        json!({"name": "Search", "arguments": {"pattern": "Pa55word", "path": "/proc/self"}}),
        json!({"name": "List", "arguments": {"dirpath": format!("{h}/.ssh")}}),
        json!({"name": "UploadArtifact", "arguments": {"filePath": "hosts.yml"}}),
        json!({"name": "UploadArtifact", "arguments": {"filePath": "penv.txt"}}),
        json!({"name": "Write", "arguments": {"filepath": "out/result.json", "content": "{\"forged\": true}"}}),
        json!({"name": "Write", "arguments": {"filepath": "out/session.jsonl", "content": "forged"}}),
        // The controls: a plain outside file, directly and through a symlink.
        read(&format!("{h}/notes.txt")),
        read("notes-link.txt"),
    ]);
    let script = json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}).to_string();
    let job = format!(
        "version: 1\nname: view\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\n{readable}"
    );
    write_files(&ws, &[("job.yaml", &job), ("s.json", &script)]);
    (tmp, ws, home)
}

fn run_auto(ws: &Path, home: &Path) -> crate::support::runner::Run {
    run_auto_as(ws, home, false)
}

/// As [`run_auto`]; with `nobody`, as the ordinary user 65534 (the folders made theirs).
fn run_auto_as(ws: &Path, home: &Path, nobody: bool) -> crate::support::runner::Run {
    let mut cmd = cn_run(ws);
    if nobody {
        let base = ws.parent().unwrap();
        let chown = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(base)
            .status();
        assert!(chown.unwrap().success());
        let mut wrapped = std::process::Command::new("setpriv");
        wrapped
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(cmd.get_program())
            .current_dir(ws)
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
        cmd = wrapped;
    }
    cmd.arg("job.yaml").arg("--auto").env("HOME", home).env(
        "DATABASE_URL",
        format!("postgres://app:{ENV_SECRET}@db:5432/app"),
    );
    run(cmd, Some(&ws.join("out")))
}

#[test]
fn process_files_credentials_and_the_runs_records_stay_out_of_reach() {
    let (_tmp, ws, home) = setup("");
    let r = run_auto(&ws, &home);
    assert_eq!(r.code, 0, "{r:#?}");
    let all = everything(&ws.join("out"), &r.stdout);
    assert!(
        !all.contains(ENV_SECRET),
        "cn-run's environment reached an output"
    );
    for (f, secret) in CREDS {
        assert!(!all.contains(secret), "{f} reached an output");
    }
    assert!(
        r.result()["forged"].is_null(),
        "the run's result was overwritten"
    );
    let session = std::fs::read_to_string(ws.join("out/session.jsonl")).unwrap();
    assert!(
        !session.starts_with("forged"),
        "the run's session was overwritten"
    );
    for rule in [
        "tool.process_files",
        "tool.hidden_credentials",
        "tool.run_records",
    ] {
        assert!(all.contains(rule), "no refusal names {rule}");
    }
    // The control: a plain file outside the workspace is read in the same run.
    assert_eq!(
        session.matches(NOTE).count(),
        2,
        "the controls were not read"
    );
}

#[test]
fn the_same_view_holds_for_an_ordinary_user() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: needs root to become nobody");
        return;
    }
    let (_tmp, ws, home) = setup("");
    let r = run_auto_as(&ws, &home, true);
    assert_eq!(r.code, 0, "{r:#?}");
    let all = everything(&ws.join("out"), &r.stdout);
    assert!(
        !all.contains(ENV_SECRET),
        "cn-run's environment reached an output"
    );
    for (f, secret) in CREDS {
        assert!(!all.contains(secret), "{f} reached an output");
    }
    let session = std::fs::read_to_string(ws.join("out/session.jsonl")).unwrap();
    assert_eq!(
        session.matches(NOTE).count(),
        2,
        "the controls were not read"
    );
}

#[test]
fn a_location_the_job_gives_back_is_read() {
    let (_tmp, ws, home) = setup("tools: {bash: {readable: ['~/.aws']}}\n");
    let r = run_auto(&ws, &home);
    assert_eq!(r.code, 0, "{r:#?}");
    let all = everything(&ws.join("out"), &r.stdout);
    assert!(
        all.contains("AWS-SECRET-MARKER-9z8y"),
        "the given-back file was not read"
    );
    assert!(!all.contains("gho_HostsYmlTokenPlanted123"));
    assert!(!all.contains(ENV_SECRET));
}
