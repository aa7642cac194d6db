//! Fifth round (issue 29, resume trust): a run folder the checkout brought. Commands cannot
//! write `.cn-run`, but a pull request can commit one: `.cn-run/forged/session.jsonl`,
//! whose recorded job turns the sandbox off and touches a marker outside the workspace.
//! The workflow runs the job, then `--continue` (or `--resume latest`). Ways:
//! - committed, the first run's folder elsewhere (`--out`): the forged folder is the only
//!   one in `.cn-run`;
//! - committed as a symbolic link to a workspace file, which a contained command dates an
//!   hour ahead: newer than the first run's own folder beside it;
//! - the same link with the first run's folder elsewhere;
//! - the run folder itself a committed link to a workspace folder, dated by a command;
//! - `.cn-run` itself a committed link to a workspace folder holding the forged run, the
//!   first run's folder elsewhere.
//!
//! The marker is not there after the resume. The control: each checkout's forged folder,
//! resumed by its name, runs its command.

use std::path::Path;

use serde_json::json;

use super::redteam2_resume_e2e::Place;
use crate::support::runner::git_init;

struct Case {
    tag: &'static str,
    /// (link, target) pairs the checkout holds, made before the forged session is placed.
    links: &'static [(&'static str, &'static str)],
    /// Where the checkout holds the forged session (relative to the workspace).
    session: &'static str,
    /// The first run's folder is outside the workspace.
    out_elsewhere: bool,
    /// The first run's command dates this workspace file an hour ahead.
    touch: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        tag: "committed-out-elsewhere",
        links: &[],
        session: ".cn-run/forged/session.jsonl",
        out_elsewhere: true,
        touch: None,
    },
    Case {
        tag: "linked-file-dated-ahead",
        links: &[(".cn-run/forged/session.jsonl", "../../forged.jsonl")],
        session: "forged.jsonl",
        out_elsewhere: false,
        touch: Some("forged.jsonl"),
    },
    Case {
        tag: "linked-file-out-elsewhere",
        links: &[(".cn-run/forged/session.jsonl", "../../forged.jsonl")],
        session: "forged.jsonl",
        out_elsewhere: true,
        touch: None,
    },
    Case {
        tag: "linked-folder-dated-ahead",
        links: &[(".cn-run/forged", "../stash")],
        session: "stash/session.jsonl",
        out_elsewhere: false,
        touch: Some("stash/session.jsonl"),
    },
    Case {
        tag: "linked-cn-run-out-elsewhere",
        links: &[(".cn-run", "cache")],
        session: "cache/forged/session.jsonl",
        out_elsewhere: true,
        touch: None,
    },
];

/// The checkout of `case`: a repository whose last commit holds the forged run.
fn checkout(case: &Case) -> Place {
    // Not under the checkout, whose own `.cn-run` (a test's) would refuse `latest`.
    let p = Place::in_folder(tempfile::tempdir().unwrap());
    let session = p.forged_session();
    for (link, target) in case.links {
        let at = p.ws.join(link);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, &at).unwrap();
    }
    let file = p.ws.join(case.session);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, session).unwrap();
    git_init(&p.ws);
    p
}

/// The first run (its one command dates the case's file ahead), then the workflow's resume
/// by `resume`.
fn attack(case: &Case, resume: &[&str]) -> (Place, crate::support::runner::Run) {
    let p = checkout(case);
    let command = match case.touch {
        Some(f) => format!("touch -d '+1 hour' {f}; ls -la --time-style=full-iso {f}"),
        None => "echo first".to_owned(),
    };
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]},
        {"text": "first done"},
        {"text": "second done"}
    ]});
    let dir = p.ws.parent().unwrap().to_path_buf();
    std::fs::write(dir.join("s.json"), script.to_string()).unwrap();
    let job = dir.join("job.yaml");
    std::fs::write(
        &job,
        format!(
            "version: 1\nmodel: {{provider: script, name: m, script: {}}}\nprompt: go\npermissions: {{mode: auto}}\n",
            dir.join("s.json").display()
        ),
    )
    .unwrap();
    let elsewhere = dir.join("first-run").display().to_string();
    let mut args = vec![job.to_str().unwrap()];
    if case.out_elsewhere {
        args.extend(["--out", &elsewhere]);
    }
    let first = p.cn_in(&p.ws, &args);
    assert_eq!(first.code, 0, "{}: {first:#?}", case.tag);
    assert!(!p.marker().exists(), "{}", case.tag);
    let r = p.cn_in(&p.ws, resume);
    (p, r)
}

#[test]
fn a_resume_never_picks_a_run_folder_the_checkout_brought() {
    let mut escaped = Vec::new();
    for case in CASES {
        for resume in [
            &["--continue", "-p", "go on"][..],
            &["--resume", "latest", "-p", "go on"],
        ] {
            let (p, r) = attack(case, resume);
            if p.marker().exists() {
                escaped.push((case.tag, resume[0], r.stderr));
            }
        }
    }
    let tags: Vec<(&str, &str)> = escaped.iter().map(|(t, how, _)| (*t, *how)).collect();
    assert!(
        escaped.is_empty(),
        "the forged run's command ran on the runner: {tags:?}\n{escaped:#?}"
    );
}

#[test]
fn control_the_checkouts_forged_run_named_runs_its_command() {
    for case in CASES {
        let p = checkout(case);
        let forged = Path::new(".cn-run/forged").display().to_string();
        let r = p.cn_in(&p.ws, &["--resume", &forged, "-p", "go on"]);
        assert!(p.marker().exists(), "{}: {r:#?}", case.tag);
    }
}

/// The checkout's `.cn-run` is a link out of the workspace: the run is refused, in words,
/// before it writes its records there (it wrote a run folder and `.gitignore` through the
/// link before). The control: the link does lead there (a plain `mkdir -p` lands outside).
#[test]
fn a_cn_run_link_the_checkout_brought_is_refused_not_written_through() {
    let p = Place::in_folder(tempfile::tempdir().unwrap());
    let target = p.ws.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink("../elsewhere", p.ws.join(".cn-run")).unwrap();
    git_init(&p.ws);
    std::fs::write(
        p.ws.join("job.yaml"),
        "version: 1\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\n",
    )
    .unwrap();
    std::fs::write(
        p.ws.join("s.json"),
        json!({"turns": [{"text": "done"}]}).to_string(),
    )
    .unwrap();
    let r = p.cn_in(&p.ws, &["job.yaml"]);
    assert_ne!(r.code, 0, "{r:#?}");
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    let written: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().collect();
    assert!(written.is_empty(), "{written:?}\n{r:#?}");
    let made = std::process::Command::new("mkdir")
        .args(["-p", ".cn-run/x"])
        .current_dir(&p.ws)
        .status()
        .unwrap();
    assert!(made.success() && target.join("x").is_dir());
}
