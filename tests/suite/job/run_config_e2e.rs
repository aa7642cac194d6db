//! One resolved configuration (`RunConfig`) behind `run`, `explain` and `--resume`:
//! `explain` shows the policy and trust an untrusted run enforces (flags or
//! `untrusted_paths:`), and a resumed run keeps the flags it was started with (trust, base
//! ref, upload URL given, limits) with only the flags given to the resume laid over them.

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, git, git_init, run, write_files};

const JOB: &str = "version: 1\nname: pr\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: look\npermissions: {mode: auto}\n";

/// A repository whose committed permissions file allows `make`, while the working tree
/// (the pull request) changed it to allow `curl`.
fn repo(extra_job: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    write_files(
        ws,
        &[
            ("job.yaml", &format!("{JOB}{extra_job}")),
            (
                "s.yaml",
                "turns:\n  - text: hi\n  - text: again\n  - text: more\n",
            ),
            (".continue/permissions.yaml", "allow:\n  - Bash(make *)\n"),
        ],
    );
    git_init(ws);
    write_files(
        ws,
        &[(".continue/permissions.yaml", "allow:\n  - Bash(curl *)\n")],
    );
    tmp
}

fn explain(ws: &Path, flags: &[&str]) -> Value {
    let mut cmd = cn_run(ws);
    cmd.args(["explain", "job.yaml", "--json"]).args(flags);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{flags:?}: {r:#?}");
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn explain_shows_the_policy_and_trust_each_untrusted_run_enforces() {
    // (flags, job lines, mode, rule present, rule absent, untrusted, base ref)
    type Case<'a> = (
        &'a [&'a str],
        &'a str,
        &'a str,
        Option<&'a str>,
        &'a str,
        bool,
        Option<&'a str>,
    );
    let cases: [Case; 6] = [
        (&[], "", "auto", Some("curl"), "make", false, None),
        (&["--untrusted"], "", "headless", None, "curl", true, None),
        (
            &["--untrusted", "--auto"],
            "",
            "headless",
            None,
            "curl",
            true,
            None,
        ),
        (
            &["--untrusted", "--base-ref", "HEAD"],
            "",
            "headless",
            Some("make"),
            "curl",
            true,
            Some("HEAD"),
        ),
        (
            &[],
            "untrusted_paths: ['src/**']\nbase_ref: HEAD\n",
            "headless",
            Some("make"),
            "curl",
            true,
            Some("HEAD"),
        ),
        (
            &["--base-ref", "HEAD"],
            "untrusted_paths: ['src/**']\n",
            "headless",
            Some("make"),
            "curl",
            true,
            Some("HEAD"),
        ),
    ];
    for (flags, extra, mode, present, absent, untrusted, base) in cases {
        let tmp = repo(extra);
        let v = explain(tmp.path(), flags);
        let policy = v["policy"].to_string();
        assert_eq!(v["mode"], mode, "{flags:?} {extra}: {v}");
        if let Some(p) = present {
            assert!(policy.contains(p), "{flags:?} {extra}: {policy}");
        }
        assert!(!policy.contains(absent), "{flags:?} {extra}: {policy}");
        assert_eq!(v["trust"]["untrusted"], untrusted, "{flags:?} {extra}");
        assert_eq!(v["trust"]["base_ref"].as_str(), base, "{flags:?} {extra}");
        assert_eq!(
            v["config"]["flags"]["untrusted"],
            flags.contains(&"--untrusted")
        );
    }
}

#[test]
fn explain_in_text_says_the_run_is_untrusted_and_where_instructions_come_from() {
    let tmp = repo("");
    let mut cmd = cn_run(tmp.path());
    cmd.args(["explain", "job.yaml", "--untrusted", "--base-ref", "HEAD"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(r.stdout.contains("trust: UNTRUSTED"), "{}", r.stdout);
    assert!(r.stdout.contains("the trusted base commit"), "{}", r.stdout);
    assert!(r.stdout.contains("mode: headless"), "{}", r.stdout);
    assert!(
        r.stdout.contains("context length: 128000 (model family)"),
        "{}",
        r.stdout
    );
    // Without a base ref, nothing of the repository's is used, and it says so.
    let mut cmd = cn_run(tmp.path());
    cmd.args(["explain", "job.yaml", "--untrusted"]);
    let r = run(cmd, None);
    assert!(
        r.stdout.contains("untrusted mode without a base ref"),
        "{}",
        r.stdout
    );
}

/// The configuration the session keeps (the upload URL never in it).
fn stored(ws: &Path) -> Value {
    let s = crate::support::runner::session_of(&crate::support::runner::run_folder(ws));
    s["job"]["config"].clone()
}

fn cn(ws: &Path, args: &[&str]) -> Run {
    let mut cmd = cn_run(ws);
    cmd.args(args);
    run(cmd, None)
}

#[test]
fn a_resume_restores_the_stored_flags_and_applies_only_the_given_ones() {
    let tmp = repo("");
    let ws = tmp.path();
    let first = cn(
        ws,
        &[
            "job.yaml",
            "--untrusted",
            "--base-ref",
            "HEAD",
            "--max-turns",
            "5",
            "--upload-url",
            "http://127.0.0.1:9/up/s3cr3t-url",
        ],
    );
    assert_eq!(first.code, 0, "{first:#?}");
    let c = stored(ws);
    assert_eq!(c["trust"]["untrusted"], true, "{c}");
    assert_eq!(c["trust"]["base_ref"], "HEAD", "{c}");
    assert_eq!(c["flags"]["max_turns"], 5, "{c}");
    assert_eq!(c["flags"]["upload_url_given"], true, "{c}");
    assert!(!c.to_string().contains("s3cr3t"), "{c}");
    // Nothing given: all of it comes back; the missing upload URL is named.
    let again = cn(ws, &["--resume", "latest", "-p", "again"]);
    assert_eq!(again.code, 0, "{again:#?}");
    assert!(
        again.stderr.contains("give --upload-url again"),
        "{}",
        again.stderr
    );
    let c = stored(ws);
    assert_eq!(
        (
            c["trust"]["untrusted"].clone(),
            c["trust"]["base_ref"].clone()
        ),
        (Value::Bool(true), "HEAD".into())
    );
    assert_eq!(c["limits"]["max_turns"], 5, "{c}");
    // A flag given to the resume wins; the rest stays.
    let more = cn(
        ws,
        &["--resume", "latest", "-p", "more", "--max-turns", "9"],
    );
    assert_eq!(more.code, 0, "{more:#?}");
    let c = stored(ws);
    assert_eq!(c["limits"]["max_turns"], 9, "{c}");
    assert_eq!(c["trust"]["untrusted"], true, "{c}");
    assert_eq!(c["trust"]["base_ref"], "HEAD", "{c}");
    let _ = git(ws, &["status", "--short"]);
}

/// A session written before the configuration was stored (only its command-line words)
/// still resumes with its trust.
#[test]
fn an_older_session_resumes_with_its_recorded_trust_flags() {
    let tmp = repo("");
    let ws = tmp.path();
    assert_eq!(
        cn(ws, &["job.yaml", "--untrusted", "--base-ref", "HEAD"]).code,
        0
    );
    // The whole-file session.json of an earlier version, in place of the log.
    let folder = crate::support::runner::run_folder(ws);
    let mut s = crate::support::runner::session_of(&folder);
    s["job"].as_object_mut().unwrap().remove("config");
    s["job"]["args"] = serde_json::json!(["--untrusted", "--base-ref", "HEAD"]);
    s["schema_version"] = serde_json::json!(1);
    std::fs::remove_file(folder.join("session.jsonl")).unwrap();
    let path = folder.join("session.json");
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let r = cn(ws, &["--resume", "latest", "-p", "again"]);
    assert_eq!(r.code, 0, "{r:#?}");
    let c = stored(ws);
    assert_eq!(c["trust"]["untrusted"], true, "{c}");
    assert_eq!(c["trust"]["base_ref"], "HEAD", "{c}");
}
