//! Fifth round (issue 29, Fetch): the modes that answer every ask. Fetch of a local address
//! asks (`tool.private_address`), and auto mode and `on_ask: allow` answered that ask: a run
//! with `--auto` fetched the metadata address, loopback and the machine's own addresses,
//! which a contained command (no network by default) cannot reach. Each URL here is fetched
//! under `mode: auto` and under `on_ask: allow`, in the network and mount namespace of
//! `redteam_fetch_e2e` (its listener on 127.0.0.1, ::1, 169.254.169.254 and the machine's
//! own 11.22.33.44 and 2a00:1450::99; its `/etc/hosts` names): the metadata address and its
//! name, loopback by dotted, short, decimal, hex and mapped-IPv6 forms, `0.0.0.0`, `[::]`,
//! `localhost`, the own addresses and a name resolving to one. No listener logs a request.
//! The control: a rule naming each URL reaches its listener in both modes.

use std::path::Path;

use super::redteam_fetch_e2e::{HOSTS, LISTENER, reached, run_in_namespace, write_job_with};

const URLS: &[&str] = &[
    "http://169.254.169.254/latest/meta-data/TAG",
    "http://metadata.internal/TAG",
    "http://127.0.0.1/TAG",
    "http://127.1/TAG",
    "http://2130706433/TAG",
    "http://0x7f.0.0.1/TAG",
    "http://[::ffff:127.0.0.1]/TAG",
    "http://0.0.0.0/TAG",
    "http://[::1]/TAG",
    "http://[::]/TAG",
    "http://localhost/TAG",
    "http://11.22.33.44/TAG",
    "http://own.example/TAG",
    "http://[2a00:1450::99]/TAG",
];

/// The permissions mappings that answer every ordinary ask.
const MODES: &[&str] = &["{mode: auto}", "{on_ask: allow}"];

fn urls() -> Vec<String> {
    URLS.iter()
        .enumerate()
        .map(|(i, u)| u.replace("TAG", &format!("fa{i}")))
        .collect()
}

/// Runs the fetches under `permissions`; the listener's log, or `None` where the test
/// cannot make the namespaces.
fn fetch_all(dir: &Path, permissions: &str) -> Option<(String, crate::support::runner::Run)> {
    let files = [("listener.py", LISTENER), ("hosts", HOSTS)];
    write_job_with(dir, &urls(), permissions, &files);
    let r = run_in_namespace(dir)?;
    assert!(dir.join("ready").exists(), "{r:#?}");
    Some((reached(dir), r))
}

#[test]
fn auto_mode_and_on_ask_allow_fetch_no_local_address() {
    for mode in MODES {
        let tmp = tempfile::tempdir().unwrap();
        let Some((log, r)) = fetch_all(tmp.path(), mode) else {
            eprintln!("SKIPPED: cannot make a network and mount namespace here");
            return;
        };
        assert_eq!(r.code, 0, "{mode}: {r:#?}");
        assert_eq!(log, "", "{mode}: a local address was fetched\n{r:#?}");
        let finished = r.events_of("tool.finished");
        assert_eq!(finished.len(), URLS.len(), "{mode}: {r:#?}");
        for f in finished {
            let out = f["output"].as_str().unwrap_or_default();
            assert!(!out.contains("reached"), "{mode}: {out}");
            assert!(out.contains("tool.private_address"), "{mode}: {out}");
        }
    }
}

#[test]
fn control_a_rule_naming_each_url_reaches_its_listener_in_both_modes() {
    let rules: Vec<String> = urls().iter().map(|u| format!("'Fetch({u})'")).collect();
    for mode in MODES {
        let tmp = tempfile::tempdir().unwrap();
        let inner = mode.trim_start_matches('{').trim_end_matches('}');
        let permissions = format!("{{{inner}, allow: [{}]}}", rules.join(", "));
        let Some((log, r)) = fetch_all(tmp.path(), &permissions) else {
            eprintln!("SKIPPED: cannot make a network and mount namespace here");
            return;
        };
        let missing: Vec<String> = (0..URLS.len())
            .map(|i| format!("/fa{i} "))
            .filter(|t| !log.contains(t.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "{mode}: not reached {missing:?}\n{log}\n{r:#?}"
        );
    }
}
