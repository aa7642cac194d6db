//! A token a checkout left in `.git/config` — `actions/checkout`'s `http.<url>.extraheader`
//! (basic auth in base64), a bearer header, a password in a remote, submodule or
//! `insteadOf` URL — is held by no variable, yet reaches no output of a run whose model
//! reads the config every way it can (`cat`, `git config`, `Read`, decoding the header)
//! and puts the token in its answer: stdout (json and stream-json), stderr, events, result,
//! session, JUnit and the tool results the model got back.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::support::runner::{cn_run, files_under, git, git_init, run, write_files};

/// (git config key, value, the token in it).
fn cases() -> Vec<(String, String, String)> {
    let basic = "ghs_PlantedCheckoutToken0123456789abcd";
    let header = format!(
        "AUTHORIZATION: basic {}",
        STANDARD.encode(format!("x-access-token:{basic}"))
    );
    vec![
        (
            "http.https://github.com/.extraheader".into(),
            header,
            basic.into(),
        ),
        (
            "http.extraheader".into(),
            "Authorization: Bearer glpat-PlantedBearer98765".into(),
            "glpat-PlantedBearer98765".into(),
        ),
        (
            "remote.origin.url".into(),
            "https://ci-bot:PlantedRemotePass4242@git.example.com/o/r.git".into(),
            "PlantedRemotePass4242".into(),
        ),
        (
            "submodule.lib.url".into(),
            "https://oauth2:PlantedSubmoduleTok77@gitlab.example.com/g/lib.git".into(),
            "PlantedSubmoduleTok77".into(),
        ),
        (
            "url.https://x-access-token:ghp_PlantedInsteadOf5555@github.com/.insteadOf".into(),
            "https://github.com/".into(),
            "ghp_PlantedInsteadOf5555".into(),
        ),
    ]
}

fn spellings(token: &str) -> Vec<String> {
    vec![
        token.to_owned(),
        STANDARD.encode(token).trim_end_matches('=').to_owned(),
        token.chars().rev().collect(),
    ]
}

fn script(token: &str) -> String {
    json!({"turns": [
        {"tool_calls": [
            {"name": "Bash", "arguments": {"command": "cat .git/config"}},
            {"name": "Bash", "arguments": {"command": "git config --list --show-origin"}},
            {"name": "Read", "arguments": {"filepath": ".git/config"}},
            {"name": "Bash", "arguments": {"command": "git config --get-regexp extraheader | awk '{print $NF}' | base64 -d"}}
        ]},
        {"text": format!("the token is {token}")}
    ]})
    .to_string()
}

#[test]
fn a_token_a_checkout_left_in_git_config_reaches_no_output() {
    for (key, value, token) in cases() {
        for format in ["json", "stream-json"] {
            let tmp = tempfile::tempdir().unwrap();
            let repo = tmp.path().join("repo");
            std::fs::create_dir(&repo).unwrap();
            let job = "version: 1\nname: creds\nmodel: {provider: script, name: m, script: s.json}\nprompt: look around\npermissions: {mode: auto, allow: ['Bash(git config *)', 'Bash(cat *)']}\nchecks: [{name: config, run: 'cat .git/config'}]\n";
            write_files(&repo, &[("job.yaml", job), ("s.json", &script(&token))]);
            git_init(&repo);
            git(&repo, &["config", &key, &value]);
            let out = tmp.path().join("out");
            let mut cmd = cn_run(&repo);
            cmd.arg("job.yaml").args(["--format", format]);
            let r = run(cmd, Some(&out));
            let what = format!("{key} with --format {format}");
            assert_eq!(r.code, 0, "{what}: {}", r.stderr);
            let mut texts = vec![("stdout".to_owned(), r.stdout.clone())];
            texts.push(("stderr".to_owned(), r.stderr.clone()));
            for f in files_under(&out) {
                let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
                texts.push((f.display().to_string(), text));
            }
            for (name, text) in &texts {
                for s in spellings(&token) {
                    assert!(!text.contains(&s), "{what}: {name} carries {s:?}");
                }
            }
            // The model read the config (the outputs are not empty of it) and got masks.
            let events = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
            assert!(events.contains("[REDACTED]"), "{what}: nothing was masked");
            assert!(events.contains(".git/config"), "{what}");
        }
    }
}
