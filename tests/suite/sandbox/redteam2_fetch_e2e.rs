//! Second red-team round (issue 29, Fetch): local addresses by spellings neither earlier
//! round tried, end to end under the default policy with a scripted model, in a network and
//! mount namespace the test makes (nothing of the machine is touched). Its `lo` carries
//! private (10.9.9.9), CGNAT (100.64.0.9), benchmark (198.18.0.9) and ULA (fd00::9)
//! addresses and a `tun` interface the machine's own public-shaped address (11.22.33.55);
//! `/etc/hosts` names resolve to those, to 0.0.0.0 and to ::1. One listener on every address
//! (0.0.0.0 and [::], port 80) logs each request. The spellings: short, decimal, hex and
//! octal loopback, 0 and 0.0.0.0, other loopback addresses, mapped IPv6 loopback, fullwidth,
//! circled and ideographic-dot digits (which URL parsing maps to ASCII), a trailing dot on an
//! IP, an upper-case scheme, a zero-padded port, each special range and the own address by
//! literal and by name; then redirects from an allowed URL (port 8080) to 0, a
//! scheme-relative `//127.0.0.1`, mapped IPv6, decimal loopback, the own address's name and
//! (307) the metadata address. Nothing is logged but the allowed redirect starts. The
//! control allows every URL by a rule and reaches each directly; `curl -L` shows each
//! redirect reaches its listener.

use std::path::Path;

use serde_json::json;

use super::redteam_fetch_e2e::{reached, run_in_netns, write_job};
use crate::support::runner::Run;

const LISTENER: &str = r#"
import json, socket, threading
redirects = json.load(open("redirects.json"))
def serve(fam, addr):
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(addr)
    s.listen(64)
    while True:
        c, _ = s.accept()
        req = c.recv(4096)
        line = req.split(b"\r\n")[0].decode(errors="replace")
        open("reached.log", "a").write("%s %s\n" % (addr[1], line))
        path = line.split(" ")[1] if line.count(" ") >= 2 else ""
        if addr[1] == 8080 and path in redirects:
            code, loc = redirects[path]
            c.sendall(("HTTP/1.1 %d Moved\r\nlocation: %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n" % (code, loc)).encode())
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached")
        c.close()
for fam, a in [(socket.AF_INET, ("0.0.0.0", 80)), (socket.AF_INET6, ("::", 80)), (socket.AF_INET, ("0.0.0.0", 8080))]:
    threading.Thread(target=serve, args=(fam, a), daemon=True).start()
open("ready", "w").close()
threading.Event().wait(120)
"#;

const HOSTS: &str = "127.0.0.1 localhost\n11.22.33.55 tun.example\n0.0.0.0 zero.example\n::1 loop6.example\nfd00::9 ula.example\n";

/// The URLs fetched directly; `TAG` becomes each one's own path.
const DIRECT: &[&str] = &[
    "http://127.1/TAG",
    "http://0/TAG",
    "http://0.0.0.0/TAG",
    "http://2130706433/TAG",
    "http://0x7f000001/TAG",
    "http://0177.1/TAG",
    "http://0x7f.1/TAG",
    "http://127.0.0.2/TAG",
    "http://127.255.255.254/TAG",
    "http://[::ffff:127.0.0.1]/TAG",
    "http://[::ffff:7f00:1]/TAG",
    "http://[0::1]/TAG",
    "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/TAG",
    "http://127\u{3002}0\u{3002}0\u{3002}1/TAG",
    "http://\u{2460}\u{2461}\u{2466}.\u{24ea}.\u{24ea}.\u{2460}/TAG",
    "http://127.0.0.1./TAG",
    "HTTP://127.0.0.1/TAG",
    "http://127.0.0.1:0080/TAG",
    "http://10.9.9.9/TAG",
    "http://100.64.0.9/TAG",
    "http://198.18.0.9/TAG",
    "http://[fd00::9]/TAG",
    "http://11.22.33.55/TAG",
    "http://tun.example/TAG",
    "http://zero.example/TAG",
    "http://loop6.example/TAG",
    "http://ula.example/TAG",
];

/// Redirects from the allowed port: (status, location; `TAG` as above).
const REDIRECTS: &[(u16, &str)] = &[
    (302, "http://0/TAG"),
    (302, "//127.0.0.1/TAG"),
    (301, "http://[::ffff:7f00:1]/TAG"),
    (302, "http://2130706433/TAG"),
    (303, "http://tun.example/TAG"),
    (307, "http://169.254.169.254/TAG"),
];

/// (the URLs the model fetches, the redirect starts among them, the redirect table).
fn urls() -> (Vec<String>, Vec<String>, serde_json::Value) {
    let mut urls: Vec<String> = DIRECT
        .iter()
        .enumerate()
        .map(|(i, u)| u.replace("TAG", &format!("d{i}")))
        .collect();
    let mut starts = Vec::new();
    let mut table = serde_json::Map::new();
    for (i, (code, loc)) in REDIRECTS.iter().enumerate() {
        let path = format!("/r{i}");
        table.insert(
            path.clone(),
            json!([code, loc.replace("TAG", &format!("t{i}"))]),
        );
        let start = format!("http://11.22.33.55:8080{path}");
        starts.push(start.clone());
        urls.push(start);
    }
    (urls, starts, serde_json::Value::Object(table))
}

fn job(dir: &Path, urls: &[String], allow: &[String], table: &serde_json::Value) {
    let redirects = table.to_string();
    let files = [
        ("listener.py", LISTENER),
        ("hosts", HOSTS),
        ("redirects.json", redirects.as_str()),
    ];
    write_job(dir, urls, allow, &files);
}

/// Runs the job in `dir` in a new network and mount namespace (see the module header);
/// afterwards `curl -L` follows each URL of `follow` there (the control's uncontained
/// client). `None` where the test cannot make the namespaces.
fn run_in_namespace(dir: &Path, follow: &[String]) -> Option<Run> {
    let setup = "mount --bind hosts /etc/hosts && ip link set lo up \
                 && ip addr add 10.9.9.9/32 dev lo && ip addr add 100.64.0.9/32 dev lo \
                 && ip addr add 198.18.0.9/32 dev lo && ip addr add 169.254.169.254/32 dev lo \
                 && ip -6 addr add fd00::9/128 dev lo nodad \
                 && ip tuntap add dev t0 mode tun && ip addr add 11.22.33.55/32 dev t0 \
                 && ip link set t0 up";
    let after = format!(
        "for u in {}; do curl -sL -o /dev/null \"$u\"; done",
        follow.join(" ")
    );
    run_in_netns(dir, setup, &after)
}

#[test]
fn no_new_spelling_of_a_local_address_is_fetched_without_a_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (urls, starts, table) = urls();
    let allow: Vec<String> = starts.iter().map(|s| format!("Fetch({s})")).collect();
    job(dir, &urls, &allow, &table);
    let Some(r) = run_in_namespace(dir, &[]) else {
        eprintln!("SKIPPED: cannot make a network and mount namespace here");
        return;
    };
    assert!(dir.join("ready").exists(), "{r:#?}");
    assert_eq!(r.code, 0, "{r:#?}");
    let log = reached(dir);
    let lines: Vec<&str> = log.lines().collect();
    let want: Vec<String> = (0..REDIRECTS.len())
        .map(|i| format!("8080 GET /r{i} HTTP/1.1"))
        .collect();
    assert_eq!(
        lines, want,
        "only the allowed starts, none of their redirects\n{r:#?}"
    );
    for f in r.events_of("tool.finished") {
        let out = f["output"].as_str().unwrap_or_default();
        assert!(!out.contains("reached"), "{out}");
    }
}

#[test]
fn control_every_new_spelling_allowed_by_a_rule_reaches_the_listener() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (urls, starts, table) = urls();
    job(dir, &urls, &["Fetch(*)".to_owned()], &table);
    // Fetch follows no redirect to another local host even with a rule; curl shows each
    // redirect leads to a live listener.
    let Some(r) = run_in_namespace(dir, &starts) else {
        eprintln!("SKIPPED: cannot make a network and mount namespace here");
        return;
    };
    let log = reached(dir);
    let tags = (0..DIRECT.len())
        .map(|i| format!("/d{i} "))
        .chain((0..REDIRECTS.len()).map(|i| format!("/t{i} ")));
    let missing: Vec<String> = tags.filter(|t| !log.contains(t.as_str())).collect();
    assert!(
        missing.is_empty(),
        "not reached: {missing:?}\n{log}\n{r:#?}"
    );
}
