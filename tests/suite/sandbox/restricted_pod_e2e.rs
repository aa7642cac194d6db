//! cn-run as it runs in a restricted Kubernetes pod: an ordinary user (nobody), no
//! capability, and no way to make a user namespace (here a user namespace whose limit is
//! 0; in a pod the runtime's seccomp profile). bubblewrap cannot start, and the run must
//! say truthfully what holds: for each protection of the default profile, what
//! result.json claims is checked against what a command could do.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::runner::{Run, own_repo_boundary, write_files};

/// Run cn-run as uid/gid 65534 with no capability in a user namespace where no further
/// one can be made. `None` (skipped, said) where this machine cannot set that up.
fn as_pod_user(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Option<Run> {
    let inner = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --reuid=65534 \
         --regid=65534 --clear-groups --bounding-set=-all --inh-caps=-all '{}' \"$@\"",
        env!("CARGO_BIN_EXE_cn-run")
    );
    // The shell waits until the maps are written, then execs (getting its capabilities in
    // the namespace back) into the script that sets the limit and drops to nobody.
    let mut child = Command::new("unshare")
        .args([
            "-U",
            "--",
            "sh",
            "-c",
            "read go; exec sh -c \"$INNER\" sh \"$@\"",
            "sh",
        ])
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INNER", inner)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let pid = child.id();
    // Once unshare(2) has run: the process is in a user namespace of its own.
    let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/user")).ok();
    let entered = crate::support::procs::wait_for(|| ns(&pid.to_string()) != ns("self"));
    let mapped = entered
        && ["uid_map", "gid_map"]
            .iter()
            .all(|m| std::fs::write(format!("/proc/{pid}/{m}"), "0 0 65536").is_ok());
    let mut stdin = child.stdin.take()?;
    let _ = stdin.write_all(b"go\n");
    drop(stdin);
    let out = child.wait_with_output().ok()?;
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        out: Some(dir.join("out")),
    };
    if !mapped || !dir.join("out/result.json").is_file() {
        eprintln!(
            "SKIPPED (no user namespace with a uid map here): {}",
            run.stderr
        );
        return None;
    }
    Some(run)
}

/// Owned by nobody, so the run can use it.
fn give_to_nobody(path: &Path) {
    for entry in crate::support::runner::files_under(path)
        .iter()
        .chain([path.to_path_buf()].iter())
    {
        let _ = std::os::unix::fs::chown(entry, Some(65534), Some(65534));
    }
    let mut dirs = vec![path.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let _ = std::os::unix::fs::chown(&d, Some(65534), Some(65534));
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let _ = std::os::unix::fs::chown(e.path(), Some(65534), Some(65534));
            if e.path().is_dir() {
                dirs.push(e.path());
            }
        }
    }
}

/// The output of the call `id` in the run's events.
fn output_of(events: &[Value], id: &str) -> String {
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool.finished" && e["call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {events:#?}"));
    assert_eq!(finished["status"], "ok", "{id} did not run: {finished}");
    finished["output"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_non_root_run_without_user_namespaces_says_truthfully_what_contains_it() {
    // Outside /tmp: where the fallback leaves /tmp the host's (`private-tmp` missing), it is
    // writable, which the `tmp` call checks on its own.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = tmp.path();
    // Inside the checkout (target/tmp): a repository of its own, not the checkout's.
    own_repo_boundary(root);
    let (ws, outside, home) = (root.join("ws"), root.join("outside"), root.join("home"));
    for d in [&ws, &outside, &home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let nonce = format!("{}", std::process::id());
    let key = format!("planted-pod-key-{nonce}");
    std::fs::write(home.join(".ssh/id_rsa"), &key).unwrap();
    let host_tmp = format!("/tmp/cn-run-pod-marker-{nonce}");
    let _ = std::fs::remove_file(&host_tmp);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let host_init = std::fs::read_to_string("/proc/1/comm").unwrap_or_default();
    let calls = [
        ("who", "id -u".to_owned()),
        ("tmp", format!("echo pod > {host_tmp}")),
        (
            "outside",
            format!("echo pod > {}/written", outside.display()),
        ),
        ("creds", format!("cat {}/.ssh/id_rsa", home.display())),
        ("pid", "cat /proc/1/comm".to_owned()),
        (
            "net",
            format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'; true"),
        ),
        (
            "udp",
            format!("bash -c 'echo hi > /dev/udp/127.0.0.1/{udp_port}'; true"),
        ),
        ("env", "env".to_owned()),
    ];
    let mut script = String::from("turns:\n");
    for (id, cmd) in &calls {
        script.push_str(&format!(
            "  - tool_calls: [{{name: Bash, id: {id}, arguments: {{command: {}}}}}]\n",
            serde_json::to_string(cmd).unwrap()
        ));
    }
    script.push_str("  - text: done\n");
    let job = "version: 1\nname: pod\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: p\npermissions: {allow: ['Bash(*)']}\n";
    write_files(&ws, &[("job.yaml", job), ("s.yaml", &script)]);
    give_to_nobody(root);
    let home_s = home.display().to_string();
    let env = [
        ("HOME", home_s.as_str()),
        ("PLANTED_POD_ENV", "planted-env-value"),
    ];
    let Some(r) = as_pod_user(&ws, &["job.yaml", "--auto", "--out", "out"], &env) else {
        return;
    };
    assert_eq!(r.code, 0, "{r:#?}");
    let events = r.events();
    let sandbox = r.result()["sandbox"].clone();
    let claims = |p: &str| {
        sandbox["enforced"]
            .as_array()
            .unwrap()
            .contains(&Value::from(p))
    };
    assert_ne!(sandbox["mechanism"], "bubblewrap", "{sandbox:#}");
    assert!(
        !sandbox["missing"].as_array().unwrap().is_empty(),
        "{sandbox:#}"
    );
    assert!(
        r.stderr.contains("missing") || r.stderr.contains("contain"),
        "said on stderr: {}",
        r.stderr
    );
    assert_eq!(output_of(&events, "who").trim(), "65534", "ran as nobody");

    // Each claim against its effect.
    let tcp_reached = {
        std::thread::sleep(Duration::from_millis(100));
        listener.accept().is_ok()
    };
    let udp_reached = udp.recv(&mut [0u8; 16]).is_ok();
    // A part the notes claim: TCP cut off by Landlock where the network is not.
    let notes = sandbox["notes"].to_string();
    if notes.contains("TCP connections and listening sockets are blocked") {
        assert!(
            !tcp_reached,
            "the notes say TCP is blocked, and it was not: {notes}"
        );
    }
    let held = [
        ("private-tmp", !Path::new(&host_tmp).exists()),
        (
            "read-only-outside-workspace",
            !outside.join("written").exists(),
        ),
        (
            "hidden-credentials",
            !output_of(&events, "creds").contains(&key),
        ),
        ("pid-namespace", output_of(&events, "pid") != host_init),
        ("no-network", !tcp_reached && !udp_reached),
        (
            "env-allow-list",
            !output_of(&events, "env").contains("planted-env-value"),
        ),
    ];
    let _ = std::fs::remove_file(&host_tmp);
    for (protection, effect) in held {
        assert_eq!(
            claims(protection),
            effect,
            "{protection}: result.json says {}, the command's effect says {}: {sandbox:#}",
            if claims(protection) {
                "enforced"
            } else {
                "missing"
            },
            if effect { "held" } else { "did not hold" },
        );
        if !claims(protection) {
            assert!(
                sandbox["missing"]
                    .as_array()
                    .unwrap()
                    .contains(&Value::from(protection)),
                "{protection} neither enforced nor missing: {sandbox:#}"
            );
        }
    }
}
