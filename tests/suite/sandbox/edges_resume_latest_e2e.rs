//! Fourth round (issue 29, resume trust): `--resume latest` (`--continue`) without `--out`
//! run from a folder below the workspace. The workspace's own `.cn-run` is read-only to
//! commands, a sub-folder's is not: the model forges `sub/.cn-run/forged` (by a contained
//! command dated an hour ahead, or by Write; one or three levels down) whose recorded job
//! turns the sandbox off and touches a marker outside the workspace, and the workflow then
//! resumes from that folder. The resume is refused and says why; the marker is not there.
//! Controls: the same forged folder named explicitly runs its command, and `--continue`
//! from the workspace itself resumes the real run.

use serde_json::{Value, json};

use super::redteam2_resume_e2e::Place;

/// (tag, the sub-folder the workflow resumes from, by Write).
const CASES: &[(&str, &str, bool)] = &[
    ("sub-by-bash", "sub", false),
    ("sub-by-write", "sub", true),
    ("deep-by-bash", "a/b/c", false),
    ("deep-by-write", "a/b/c", true),
];

/// The model's forging call: `dir/.cn-run/forged/session.jsonl`.
fn forge(dir: &str, by_write: bool, session: &str) -> Value {
    let f = format!("{dir}/.cn-run/forged");
    let file = format!("{f}/session.jsonl");
    if by_write {
        return json!({"name": "Write", "arguments": {"filepath": file, "content": session}});
    }
    json!({"name": "Bash", "arguments": {"command": format!(
        "mkdir -p {f} && cp forged.jsonl {file} && touch -d '+1 hour' {file}; ls -la {f}"
    )}})
}

/// The first run (the model forges in `dir`), its exit checked.
fn first_run(dir: &str, by_write: bool) -> Place {
    // Not under the checkout, whose own `.cn-run` (a test's) would refuse `latest`.
    let p = Place::in_folder(tempfile::tempdir().unwrap());
    let session = p.forged_session();
    std::fs::write(p.ws.join("forged.jsonl"), &session).unwrap();
    std::fs::create_dir_all(p.ws.join(dir)).unwrap();
    let script = json!({"turns": [
        {"tool_calls": [forge(dir, by_write, &session)]},
        {"text": "first done"},
        {"text": "second done"}
    ]});
    std::fs::write(p.ws.join("s.json"), script.to_string()).unwrap();
    std::fs::write(
        p.ws.join("job.yaml"),
        "version: 1\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\npermissions: {mode: auto}\n",
    )
    .unwrap();
    let first = p.cn_in(&p.ws, &["job.yaml"]);
    assert_eq!(first.code, 0, "{first:#?}");
    assert!(
        p.ws.join(dir).join(".cn-run/forged/session.jsonl").exists(),
        "the forge did not land, so this case proves nothing"
    );
    p
}

#[test]
fn resume_latest_from_below_the_workspace_never_picks_a_forged_run() {
    for (tag, dir, by_write) in CASES {
        let p = first_run(dir, *by_write);
        for resume in [
            &["--continue", "-p", "go on"][..],
            &["--resume", "latest", "-p", "go on"],
        ] {
            let r = p.cn_in(&p.ws.join(dir), resume);
            assert!(!p.marker().exists(), "{tag}: the forged job ran\n{r:#?}");
            assert_ne!(r.code, 0, "{tag}: {r:#?}");
            assert!(r.stderr.contains("lies inside"), "{tag}: {}", r.stderr);
        }
    }
}

#[test]
fn control_the_forged_run_named_runs_and_the_workspace_resumes_its_own() {
    for (tag, dir, by_write) in CASES {
        let p = first_run(dir, *by_write);
        let own = p.cn_in(&p.ws, &["--continue", "-p", "go on"]);
        assert_eq!(own.code, 0, "{tag}: {own:#?}");
        assert!(!p.marker().exists(), "{tag}: {own:#?}");
        let forged = p.ws.join(dir).join(".cn-run/forged");
        let name = forged.display().to_string();
        let r = p.cn_in(&p.ws.join(dir), &["--resume", &name, "-p", "go on"]);
        assert!(p.marker().exists(), "{tag}: {r:#?}");
    }
}
