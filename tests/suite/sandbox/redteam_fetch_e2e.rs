//! Red-team round (issue 29, Fetch): local services reached by spellings the first round
//! did not try, end to end under the default policy with a scripted model. The run happens
//! in a network and mount namespace the test makes, so nothing of the machine is touched:
//! its `lo` carries a metadata address (169.254.169.254), a public-shaped IPv4
//! (11.22.33.44) and a public-shaped IPv6 (2a00:1450::99) — the machine's own addresses —
//! and its `/etc/hosts` names resolve to them. A listener on every address records each
//! request. The spellings: metadata in decimal, hex, octal, two-part and mixed forms and
//! inside IPv6; IPv6 loopback, unspecified and mapped forms; the own IPv6; names ending in a
//! dot; user-info and fragment tricks; TLS to a plain port; names resolving to each local
//! address; a redirect from an allowed local URL to the metadata address. Nothing is
//! recorded but the one allowed URL. The control allows every URL by a rule and reaches
//! each.

use std::path::Path;

use serde_json::json;

use crate::support::runner::{Run, cn_run, run, write_files};

pub(super) const LISTENER: &str = r#"
import socket, threading, sys
def serve(fam, addr):
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(addr)
    s.listen(16)
    while True:
        c, _ = s.accept()
        req = c.recv(4096)
        line = req.split(b"\r\n")[0].decode(errors="replace")
        open("reached.log", "a").write("%s %s %s\n" % (addr[0], addr[1], line))
        if addr[1] == 8080:
            c.sendall(b"HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/latest/meta-data/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached")
        c.close()
for a in [("127.0.0.1", 80), ("169.254.169.254", 80), ("11.22.33.44", 80), ("11.22.33.44", 8080)]:
    threading.Thread(target=serve, args=(socket.AF_INET, a), daemon=True).start()
for a in [("::1", 80), ("2a00:1450::99", 80)]:
    threading.Thread(target=serve, args=(socket.AF_INET6, a), daemon=True).start()
open("ready", "w").close()
threading.Event().wait(120)
"#;

pub(super) const HOSTS: &str = "127.0.0.1 localhost\n169.254.169.254 metadata.internal\n11.22.33.44 own.example\n2a00:1450::99 own6.example\n";

/// The URLs that must not be reached without a rule naming them; `TAG` is each one's own
/// path, so the listener's log says which were reached.
const URLS: &[&str] = &[
    "http://169.254.169.254/latest/meta-data/TAG",
    "http://2852039166/TAG",
    "http://0xa9fea9fe/TAG",
    "http://0251.0376.0251.0376/TAG",
    "http://169.254.43518/TAG",
    "http://0xa9.0xfe.0xa9.0xfe/TAG",
    "http://[::ffff:169.254.169.254]/TAG",
    "http://[::ffff:a9fe:a9fe]/TAG",
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]/TAG",
    "http://[::1]/TAG",
    "http://[0:0:0:0:0:0:0:1]/TAG",
    "http://[::]/TAG",
    "http://[2a00:1450::99]/TAG",
    "http://[2a00:1450:0:0:0:0:0:99]/TAG",
    "http://localhost./TAG",
    "http://LocalHost./TAG",
    "http://user:pw@127.0.0.1/TAG",
    "http://example.com@127.0.0.1/TAG",
    "http://127.0.0.1:80/TAG#@example.com/",
    "http://127.000.000.001/TAG",
    "http://0x7f.0.0.1/TAG",
    "http://017700000001/TAG",
    "https://127.0.0.1:80/TAG",
    "http://metadata.internal/TAG",
    "http://METADATA.internal./TAG",
    "http://own.example/TAG",
    "http://own6.example/TAG",
    "http://11.22.33.44/TAG",
];

fn urls() -> Vec<String> {
    URLS.iter()
        .enumerate()
        .map(|(i, u)| u.replace("TAG", &format!("rt{i}")))
        .collect()
}

/// The one local URL the job allows; it redirects to the metadata address.
const ALLOWED: &str = "http://11.22.33.44:8080/start";

fn job(dir: &Path, urls: &[String], allow: &[String]) {
    write_job(
        dir,
        urls,
        allow,
        &[("listener.py", LISTENER), ("hosts", HOSTS)],
    );
}

/// Writes a job in `dir` whose model fetches each of `urls`, allowed by `allow`, and `files`.
pub(super) fn write_job(dir: &Path, urls: &[String], allow: &[String], files: &[(&str, &str)]) {
    let rules: Vec<String> = allow.iter().map(|r| format!("'{r}'")).collect();
    let permissions = format!("{{allow: [{}]}}", rules.join(", "));
    write_job_with(dir, urls, &permissions, files);
}

/// [`write_job`] with the job's `permissions` mapping as given.
pub(super) fn write_job_with(
    dir: &Path,
    urls: &[String],
    permissions: &str,
    files: &[(&str, &str)],
) {
    let mut turns: Vec<_> = urls
        .iter()
        .map(|u| json!({"tool_calls": [{"name": "Fetch", "arguments": {"url": u}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    let job = format!(
        "version: 1\nname: fetch-local\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\npermissions: {permissions}\n"
    );
    let script = json!({ "turns": turns }).to_string();
    let mut all = vec![("job.yaml", job.as_str()), ("s.json", script.as_str())];
    all.extend_from_slice(files);
    write_files(dir, &all);
}

/// Runs the job in `dir` in a new network and mount namespace (see the module header);
/// `None` where the test cannot make them.
pub(super) fn run_in_namespace(dir: &Path) -> Option<Run> {
    let setup = "mount --bind hosts /etc/hosts && ip link set lo up \
                 && ip addr add 169.254.169.254/32 dev lo && ip addr add 11.22.33.44/32 dev lo \
                 && ip -6 addr add 2a00:1450::99/128 dev lo nodad";
    run_in_netns(dir, setup, "")
}

/// Runs `job.yaml` in `dir` in a new network and mount namespace once `setup` (shell that
/// must succeed) made its addresses and `listener.py` is ready; `after` (shell) runs after
/// cn-run, inside. `None` where the test cannot make the namespaces.
pub(super) fn run_in_netns(dir: &Path, setup: &str, after: &str) -> Option<Run> {
    let script = format!(
        "{setup} || exit 97\n\
         python3 listener.py & L=$!\n\
         i=0; while [ ! -e ready ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n\
         \"$0\" job.yaml --out out; c=$?\n{after}\nkill $L; exit $c"
    );
    let cmd = cn_run(dir);
    let program = cmd.get_program().to_owned();
    let mut wrapped = std::process::Command::new("unshare");
    wrapped
        .args(["-n", "-m", "--", "sh", "-c", &script])
        .arg(program)
        .current_dir(dir)
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let r = run(wrapped, Some(&dir.join("out")));
    (r.code != 97 && !r.stderr.contains("unshare failed")).then_some(r)
}

pub(super) fn reached(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("reached.log")).unwrap_or_default()
}

#[test]
fn no_spelling_of_a_local_or_metadata_address_is_fetched_without_a_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut urls = urls();
    urls.push(ALLOWED.to_owned());
    job(dir, &urls, &[format!("Fetch({ALLOWED})")]);
    let Some(r) = run_in_namespace(dir) else {
        eprintln!("SKIPPED: cannot make a network and mount namespace here");
        return;
    };
    assert!(dir.join("ready").exists(), "{r:#?}");
    assert_eq!(r.code, 0, "{r:#?}");
    let log = reached(dir);
    let lines: Vec<&str> = log.lines().collect();
    // Only the allowed URL was reached; its redirect to the metadata address was not.
    assert_eq!(lines, ["11.22.33.44 8080 GET /start HTTP/1.1"], "{r:#?}");
    // Each other call was refused (a rule naming it would allow it) or its name did not
    // resolve at the check; none fetched anything.
    let finished = r.events_of("tool.finished");
    assert_eq!(finished.len(), urls.len(), "{r:#?}");
    for (url, f) in urls.iter().zip(&finished) {
        let out = f["output"].as_str().unwrap_or_default();
        if url == ALLOWED {
            continue;
        }
        assert!(
            out.contains("tool.private_address") || out.contains("did not resolve"),
            "{url}: {out}"
        );
        assert!(!out.contains("reached"), "{url}: {out}");
    }
}

#[test]
fn control_every_spelling_allowed_by_a_rule_reaches_its_listener() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let urls = urls();
    job(dir, &urls, &["Fetch(*)".to_owned()]);
    let Some(r) = run_in_namespace(dir) else {
        eprintln!("SKIPPED: cannot make a network and mount namespace here");
        return;
    };
    let log = reached(dir);
    // Each URL reached a listener (a TLS hello to the plain port is logged unread), but a
    // name with a trailing dot, which the resolver does not answer here.
    for (i, url) in urls.iter().enumerate() {
        let tag = format!("/rt{i} ");
        let tls = url.starts_with("https");
        let unresolved = url.contains("./");
        assert!(
            log.contains(&tag) || (tls && log.contains("127.0.0.1 80 \u{16}")) || unresolved,
            "{url} not reached: {log}\n{r:#?}"
        );
    }
}
