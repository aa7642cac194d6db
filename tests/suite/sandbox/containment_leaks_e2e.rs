//! Contained by default, shown by effects (issue 16), second half: nothing a command starts
//! outlives it (a late write into the workspace never happens), no connection reaches a
//! listener on the host's loopback, cn-run's own environment (a planted value and a
//! key-like variable) appears in no output however the model reads `/proc`, and the
//! credential files in `$HOME` appear in no output. Each class has a control that shows
//! the test would see the escape.

use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

use serde_json::json;

use super::containment_scene::{
    CREDENTIALS, PLANTED, PLANTED_KEY, Scene, bash, namespaces_available,
};

/// Commands that leave a process behind which writes `late-TAG` into the workspace two
/// seconds later; each first writes `ran-TAG`.
fn leftover_cases(s: &Scene) -> Vec<(&'static str, String)> {
    let late = |tag: &str| format!("sleep 2; touch '{}/late-{tag}'", s.ws());
    vec![
        ("setsid", format!("setsid -f sh -c \"{}\"", late("setsid"))),
        (
            "nohup",
            format!("nohup sh -c \"{}\" >/dev/null 2>&1 &", late("nohup")),
        ),
        ("double", format!("(sh -c \"{}\" &)", late("double"))),
        (
            "disown",
            format!("sh -c \"{}\" >/dev/null 2>&1 & disown", late("disown")),
        ),
        (
            "trap",
            format!(
                "(trap '' HUP TERM; setsid sh -c \"{}\" >/dev/null 2>&1 &)",
                late("trap")
            ),
        ),
        (
            "pyfork",
            format!(
                "python3 -c 'import os,subprocess\nif os.fork()==0:\n    os.setsid()\n    if os.fork()==0:\n        subprocess.run([\"sh\",\"-c\",{:?}])\n    os._exit(0)\nos.wait()'",
                late("pyfork")
            ),
        ),
    ]
}

fn leftover_calls(s: &Scene) -> Vec<serde_json::Value> {
    let mut calls: Vec<serde_json::Value> = leftover_cases(s)
        .into_iter()
        .map(|(tag, cmd)| bash(&format!("touch ran-{tag}; {cmd}")))
        .collect();
    let late = format!(
        "touch ran-bg; setsid -f sh -c \"sleep 2; touch '{}/late-bg'\"; sleep 30",
        s.ws()
    );
    calls.push(json!({"name": "Bash", "arguments": {"command": late, "run_in_background": true}}));
    calls
}

fn late_files(s: &Scene) -> Vec<String> {
    std::thread::sleep(Duration::from_secs(4));
    late_files_now(s)
}

/// The `late-*` files in the workspace now.
fn late_files_now(s: &Scene) -> Vec<String> {
    std::fs::read_dir(&s.ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("late-"))
        .collect()
}

#[test]
fn nothing_a_command_starts_outlives_the_call_or_the_run() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let checks = format!(
        "checks: [{{name: leftover, run: \"touch ran-check; setsid -f sh -c 'sleep 2; touch {}/late-check'\"}}]\n",
        s.ws()
    );
    let r = s.run(&leftover_calls(&s), &checks);
    let ended = std::time::SystemTime::now();
    s.assert_contained(&r);
    let mut tags: Vec<&str> = leftover_cases(&s).iter().map(|(t, _)| *t).collect();
    tags.extend(["bg", "check"]);
    for tag in &tags {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{}",
            s.transcript(&r)
        );
    }
    // The background job lives, by design, until the run ends: what it left may write while
    // the run still goes on (a slow end under load), never after. Everything else never.
    let late: Vec<String> = late_files(&s)
        .into_iter()
        .filter(|name| {
            let written = std::fs::metadata(s.ws.join(name)).and_then(|m| m.modified());
            name != "late-bg" || written.is_ok_and(|t| t > ended)
        })
        .collect();
    assert!(
        late.is_empty(),
        "processes outlived their call or the run: {late:?}"
    );
}

/// What a call leaves behind ends with the call, not only with the run: the last call keeps
/// the run going 4 s, long enough for every left-behind process to write its `late-*` file,
/// under each network setting (each has its own way of starting commands). The foreground
/// leftovers only: the background job lives on by design until the run ends.
#[test]
fn what_a_call_leaves_behind_is_gone_while_the_run_goes_on() {
    if !namespaces_available() {
        return;
    }
    for network in [
        "",
        "tools: {bash: {network: true}}\n",
        "tools: {bash: {network: [example.com]}}\n",
    ] {
        let s = Scene::new();
        let mut calls: Vec<serde_json::Value> = leftover_cases(&s)
            .into_iter()
            .map(|(tag, cmd)| bash(&format!("touch ran-{tag}; {cmd}")))
            .collect();
        calls.push(bash("sleep 4; ls"));
        let r = s.run(&calls, network);
        s.assert_contained(&r);
        for (tag, _) in leftover_cases(&s) {
            assert!(
                s.ws.join(format!("ran-{tag}")).exists(),
                "{tag} did not run ({network})"
            );
        }
        let late = late_files_now(&s);
        assert!(
            late.is_empty(),
            "outlived their call ({network}): {late:?}\n{}",
            s.transcript(&r)
        );
    }
}

#[test]
fn control_without_containment_leftover_processes_outlive_the_run() {
    let s = Scene::new();
    let r = s.run(&leftover_calls(&s), "tools: {bash: {sandbox: off}}\n");
    assert_eq!(r.code, 0, "{r:#?}");
    let late = late_files(&s);
    // Which ones escape the process-group kill depends on timing (setsid -f races it);
    // some always do.
    assert!(!late.is_empty(), "{late:?}\n{}", s.transcript(&r));
}

/// Ways to reach the host's loopback: (tag, command), with the TCP port and the UDP port.
fn connect_cases(tcp: u16, udp: u16) -> Vec<(&'static str, String)> {
    vec![
        ("devtcp", format!("echo hi > /dev/tcp/127.0.0.1/{tcp}")),
        ("curl", format!("curl -s -m 3 http://127.0.0.1:{tcp}/")),
        (
            "wget",
            format!("wget -q -T 3 -t 1 -O- http://127.0.0.1:{tcp}/"),
        ),
        (
            "python",
            format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {tcp}), 3)'"
            ),
        ),
        (
            "perl",
            format!(
                "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(\"127.0.0.1:{tcp}\") or die'"
            ),
        ),
        (
            "node",
            format!(
                "node -e 'require(\"net\").connect({tcp}, \"127.0.0.1\").on(\"error\", () => process.exit(1))'"
            ),
        ),
        ("git", format!("git ls-remote http://127.0.0.1:{tcp}/x.git")),
        ("localhost", format!("curl -s -m 3 http://localhost:{tcp}/")),
        ("devudp", format!("echo hi > /dev/udp/127.0.0.1/{udp}")),
    ]
}

/// Run the connection cases with `extra` job settings; returns (tcp hit, udp hit).
fn try_connections(
    s: &Scene,
    extra: &str,
    only: Option<&[&str]>,
) -> (bool, bool, crate::support::runner::Run) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let (tp, up) = (
        listener.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port(),
    );
    let calls: Vec<_> = connect_cases(tp, up)
        .into_iter()
        .filter(|(tag, _)| only.is_none_or(|o| o.contains(tag)))
        .map(|(tag, cmd)| bash(&format!("{cmd}; touch ran-{tag}")))
        .collect();
    let r = s.run(&calls, extra);
    let tcp_hit = listener.accept().is_ok();
    let udp_hit = udp.recv(&mut [0u8; 64]).is_ok();
    (tcp_hit, udp_hit, r)
}

#[test]
fn no_connection_reaches_a_loopback_listener_by_default() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let (tcp_hit, udp_hit, r) = try_connections(&s, "", None);
    s.assert_contained(&r);
    for (tag, _) in connect_cases(1, 1) {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{}",
            s.transcript(&r)
        );
    }
    assert!(
        !tcp_hit && !udp_hit,
        "a connection got out (tcp {tcp_hit}, udp {udp_hit})\n{}",
        s.transcript(&r)
    );
}

#[test]
fn control_network_true_reaches_the_listener() {
    let s = Scene::new();
    // Only the cases that do not wait for an answer the listener never sends.
    let only: &[&str] = &["devtcp", "devudp"];
    let (tcp_hit, udp_hit, r) = try_connections(&s, "tools: {bash: {network: true}}\n", Some(only));
    assert!(
        tcp_hit && udp_hit,
        "tcp {tcp_hit}, udp {udp_hit}\n{}",
        s.transcript(&r)
    );
}

/// Ways to read cn-run's environment: (tag, command). None names the planted values.
fn environ_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        ("all", "cat /proc/*/environ | tr '\\0' '\\n'"),
        (
            "loop",
            "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null",
        ),
        (
            "parents",
            "p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ; p=$(awk '/^PPid/ {print $2}' /proc/$p/status); done; tr '\\0' '\\n' < /proc/1/environ",
        ),
        ("env", "env; printenv"),
        (
            "grep",
            "grep -a -r -h -o 'planted-env[^[:cntrl:]]*' /proc/*/environ /proc/*/task/*/environ 2>/dev/null",
        ),
        ("python", "python3 -c 'import os; print(dict(os.environ))'"),
        ("ps", "ps eww -A"),
        (
            "copy",
            "mkdir -p got && for p in /proc/[0-9]*; do cp $p/environ got/$(basename $p) 2>/dev/null; done",
        ),
    ]
}

#[test]
fn cn_runs_environment_appears_in_no_output() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let calls: Vec<_> = environ_cases()
        .into_iter()
        .map(|(tag, cmd)| bash(&format!("{cmd}; touch ran-{tag}")))
        .collect();
    let r = s.run(&calls, "");
    s.assert_contained(&r);
    for (tag, _) in environ_cases() {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{}",
            s.transcript(&r)
        );
    }
    s.assert_in_no_output(&[PLANTED, PLANTED_KEY, "planted-env-value"], &r);
}

#[test]
fn control_without_containment_the_planted_value_is_read() {
    let s = Scene::new();
    let r = s.run(&[bash("env")], "tools: {bash: {sandbox: off}}\n");
    assert!(s.all_output(&r).contains(PLANTED), "{}", s.transcript(&r));
}

/// Ways to read the credentials in `$HOME`: (tag, command).
fn credential_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        ("ssh", "cat ~/.ssh/id_ed25519"),
        ("aws", "cat ~/.aws/credentials ~/.netrc ~/.git-credentials"),
        (
            "copy",
            "mkdir -p stolen && cp -r ~/.config/gh ~/.docker ~/.ssh stolen/",
        ),
        ("grep", "grep -r -h token ~ 2>/dev/null"),
        ("find", "find ~ -type f -exec cat {} + 2>/dev/null"),
        (
            "tar",
            "mkdir -p homecopy && tar -C ~ -cf - . 2>/dev/null | tar -C homecopy -xf -",
        ),
        (
            "python",
            "python3 -c 'import pathlib; [print(p.read_text()) for p in pathlib.Path.home().rglob(\"*\") if p.is_file()]'",
        ),
    ]
}

fn secrets() -> Vec<&'static str> {
    CREDENTIALS.iter().map(|(_, s)| *s).collect()
}

#[test]
fn credential_files_in_home_appear_in_no_output() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let calls: Vec<_> = credential_cases()
        .into_iter()
        .map(|(tag, cmd)| bash(&format!("{cmd}; touch ran-{tag}")))
        .collect();
    let r = s.run(&calls, "");
    s.assert_contained(&r);
    for (tag, _) in credential_cases() {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{}",
            s.transcript(&r)
        );
    }
    s.assert_in_no_output(&secrets(), &r);
}

#[test]
fn control_a_credential_the_job_gives_back_is_read() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let r = s.run(
        &[bash("cat ~/.netrc ~/.ssh/id_ed25519")],
        "tools: {bash: {readable: ['~/.netrc']}}\n",
    );
    let all = s.all_output(&r);
    assert!(all.contains("SECRET-netrc-2d4e"), "{}", s.transcript(&r));
    assert!(!all.contains("SECRET-ssh-key-7f3a"), "{}", s.transcript(&r));
}
