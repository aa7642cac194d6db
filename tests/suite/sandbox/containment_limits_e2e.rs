//! Limits that bind (issue 29): with small `tools.bash.limits`, a command that takes too
//! much memory (perl, awk, python), starts too many processes (a counted fork loop; a
//! fork bomb), fills a private temporary folder, or writes a 20 GB file (sparse: truncate,
//! dd past the end) is stopped, and the run goes on; the private space leaves nothing on
//! the host. As root (the run's cgroup) and as an ordinary user (resource limits). The
//! control runs the same payloads with roomy limits (and uncontained, for the temporary
//! space) and every one succeeds.

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

const SMALL: &str =
    "tools: {bash: {limits: {memory: 96MiB, processes: 48, tmp: 8MiB, file_size: 8MiB}}}\n";
const ROOMY: &str =
    "tools: {bash: {limits: {memory: 3GiB, processes: 2000, tmp: 64MiB, file_size: 32GiB}}}\n";

/// (tag, command): each prints `ok-TAG` only when it got what it asked for.
fn cases() -> Vec<(&'static str, String)> {
    let mb300 = 300 * 1024 * 1024;
    let mut v: Vec<(&'static str, String)> = vec![
        ("mem-perl", format!("perl -e '$x = \"x\" x {mb300}; print \"ok-mem-perl\\n\"'")),
        ("mem-awk", format!("awk 'BEGIN{{s=\"x\"; while (length(s) < {mb300}) s = s s; print \"ok-mem-awk\"}}'")),
        ("mem-python", format!("python3 -c \"b=bytearray({mb300}); print('ok-mem-python')\"")),
        (
            "procs",
            "perl -e 'my $n=0; for (1..200) { my $p=fork(); last unless defined $p; if(!$p){sleep 3; exit} $n++ } print $n == 200 ? \"ok-procs\\n\" : \"procs-$n\\n\"'".to_owned(),
        ),
    ];
    for (tag, cmd) in [
        // Files of 4 MiB each (under the file size limit), 16 MiB in all.
        (
            "tmp",
            "for i in 1 2 3 4; do head -c 4M /dev/zero > /tmp/big$i || exit 1; done",
        ),
        (
            "var-tmp",
            "for i in 1 2 3 4; do head -c 4M /dev/zero > /var/tmp/big$i || exit 1; done",
        ),
        (
            "shm",
            "cd /dev/shm && for i in 1 2 3 4; do head -c 4M /dev/zero > big$i || exit 1; done",
        ),
        (
            "tmp-fallocate",
            "for i in 1 2 3 4; do fallocate -l 4M /tmp/f$i || exit 1; done",
        ),
        ("fsize-truncate", "truncate -s 20G big1"),
        (
            "fsize-dd",
            "dd if=/dev/zero of=big2 bs=1M seek=20480 count=1 2>/dev/null",
        ),
        ("fsize-head", "head -c 32M /dev/zero > big3"),
    ] {
        v.push((tag, format!("{cmd} && echo ok-{tag}")));
    }
    v
}

/// Run the cases (and a fork bomb, then one more command) as `user` with `extra`; the
/// tool outputs.
fn run(user: User, extra: &str, bomb: bool) -> Option<(String, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    let mut calls: Vec<Value> = cases().iter().map(|(_, c)| bash(c)).collect();
    if bomb {
        // A fork bomb the command-safety check does not read (it is in a file).
        calls.push(bash(
            "echo 'sh $0 & sh $0' > bomb.sh; timeout 2 sh bomb.sh 2>/dev/null; echo after-bomb",
        ));
        calls.push(bash("echo next-call"));
    }
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    Some((s.tool_outputs(), s))
}

fn assert_bound(user: User) {
    let Some((out, s)) = run(user, SMALL, true) else {
        return;
    };
    for (tag, _) in cases() {
        assert!(
            !out.contains(&format!("ok-{tag}")),
            "{tag} was not bounded:\n{out}"
        );
    }
    assert!(out.contains("procs-"), "{out}");
    assert!(
        out.contains("after-bomb") && out.contains("next-call"),
        "{out}"
    );
    let limits = &s.run(&[bash("true")], SMALL).result()["sandbox"]["limits"];
    assert_eq!(limits["processes"], 48, "{limits}");
    assert_eq!(limits["tmp_bytes"], 8 << 20, "{limits}");
}

#[test]
fn root_commands_are_bounded_by_the_jobs_limits() {
    assert_bound(User::Root);
}

#[test]
fn an_ordinary_users_commands_are_bounded_by_the_jobs_limits() {
    assert_bound(User::Nobody);
}

#[test]
fn control_with_roomy_limits_every_payload_gets_what_it_asks() {
    for user in [User::Root, User::Nobody] {
        let Some((out, _)) = run(user, ROOMY, false) else {
            continue;
        };
        for (tag, _) in cases() {
            assert!(out.contains(&format!("ok-{tag}")), "{user:?} {tag}:\n{out}");
        }
    }
}

/// What a command leaves in the private temporary folders is gone from the host when the
/// run ends, as any user; uncontained, the same file stays in the host's `/tmp`.
#[test]
fn the_private_temporary_space_leaves_nothing_on_the_host() {
    let marker = format!("cn-run-tmp-marker-{}", fastrand::u64(..));
    let write = format!(
        "for d in /tmp /var/tmp /dev/shm; do mkdir -p $d/{marker}/ro && touch $d/{marker}/ro/f && chmod 500 $d/{marker}/ro; done; ls /tmp"
    );
    let found = |m: &str| {
        ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .map(|d| std::path::Path::new(d).join(m))
            .filter(|p| p.exists())
            .collect::<Vec<_>>()
    };
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        let r = s.run(&[bash(&write)], "");
        assert!(s.tool_outputs().contains(&marker), "{}", s.transcript(&r));
        assert_eq!(found(&marker), Vec::<std::path::PathBuf>::new(), "{user:?}");
    }
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    s.run(&[bash(&write)], "tools: {bash: {sandbox: off}}\n");
    let left = found(&marker);
    for p in &left {
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+rwx"])
            .arg(p)
            .status();
        let _ = std::fs::remove_dir_all(p);
    }
    assert_eq!(left.len(), 3, "the control left no marker");
}

/// `explain` shows the limits, the git setting and what the probe found enforced here (no
/// more than the run's own record would say).
#[test]
fn explain_shows_the_limits_the_git_setting_and_only_what_was_checked() {
    let s = Scene::new();
    let job = s.job_path();
    let script = s.home.join("script.json");
    std::fs::write(&script, r#"{"turns": [{"text": "done"}]}"#).unwrap();
    let head = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: '{}'}}\nprompt: go\n",
        script.display()
    );
    std::fs::write(
        &job,
        format!(
            "{head}tools: {{bash: {{git: commit, limits: {{memory: 96MiB, processes: 48, tmp: 8MiB, file_size: 8MiB}}}}}}\n"
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cn-run"))
        .arg("explain")
        .arg(&job)
        .arg("-C")
        .arg(&s.ws)
        .current_dir(&s.home)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  git: commit"), "{text}");
    // `explain` writes nothing: no run folder root where it ran or in the workspace (it
    // made `.cn-run` in the folder it ran from, the checkout itself under `cargo test`).
    for dir in [&s.home, &s.ws] {
        assert!(
            !dir.join(".cn-run").exists(),
            "explain made {}/.cn-run",
            dir.display()
        );
    }
    assert!(
        text.contains("memory 96 MiB")
            && text.contains("processes 48")
            && text.contains("tmp 8 MiB"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("enforced (checked here)"))
        .unwrap_or_default();
    if user_available(User::Root) {
        assert!(
            line.contains("no-capabilities") && line.contains("no-host-sockets"),
            "{text}"
        );
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_cn-run"))
        .arg("validate")
        .arg({
            std::fs::write(
                &job,
                format!("{head}tools: {{bash: {{limits: {{memory: 12 parsecs}}}}}}\n"),
            )
            .unwrap();
            &job
        })
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("tools.bash.limits.memory"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}
