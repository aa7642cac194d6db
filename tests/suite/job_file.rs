//! Bad job files: every problem reported with file:line:column and the field, exit 2,
//! nothing run, no secret value echoed.

use std::path::Path;

use crate::support::runner::{cn_run, run, write_files};

const SCRIPT: &str = "turns:\n  - text: ok\n";

fn write_job(dir: &Path, body: &str) -> std::path::PathBuf {
    write_files(dir, &[("job.yaml", body), ("script.yaml", SCRIPT)]);
    dir.join("job.yaml")
}

fn check(body: &str) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    let job = write_job(tmp.path(), body);
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job);
    let r = run(cmd, None);
    assert!(
        !tmp.path().join(".cn-run").exists(),
        "a bad job must not start a run"
    );
    (
        r.code,
        r.stderr.replace(&tmp.path().display().to_string(), "DIR"),
    )
}

const GOOD_MODEL: &str = "model:\n  provider: script\n  name: m\n  script: script.yaml\n";

#[test]
fn unknown_field_is_located() {
    let (code, err) = check(&format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\nlimits:\n  max_turn: 3\n"
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains("DIR/job.yaml:8:3: limits.max_turn: unknown field `max_turn`"),
        "{err}"
    );
}

#[test]
fn wrong_type_is_located() {
    let (code, err) = check(&format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\nlimits: {{max_turns: many}}\n"
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains("DIR/job.yaml:7:21: limits.max_turns: wrong type"),
        "{err}"
    );
}

#[test]
fn missing_prompt_is_located() {
    let (code, err) = check(&format!("version: 1\n{GOOD_MODEL}"));
    assert_eq!(code, 2);
    assert!(
        err.contains("job.yaml:1:1: prompt: missing required field"),
        "{err}"
    );
}

#[test]
fn undeclared_template_parameter_is_located_at_its_use() {
    let body = format!(
        "version: 1\n{GOOD_MODEL}prompt: |\n  Fix the code\n  in {{{{ params.dir }}}} now.\n"
    );
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    assert!(
        err.contains("job.yaml:8:6: prompt: template refers to `params.dir`"),
        "{err}"
    );
}

#[test]
fn a_required_parameter_without_value_is_an_error_and_param_sets_it() {
    let body = format!(
        "version: 1\n{GOOD_MODEL}prompt: \"fix {{{{ params.dir }}}}\"\nparams:\n  dir: {{description: where}}\n"
    );
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    assert!(
        err.contains("job.yaml:8:3: params.dir: required parameter has no value"),
        "{err}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let job = write_job(tmp.path(), &body);
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job)
        .args(["--param", "dir=src/", "--format", "json"]);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let first = &r.events()[0];
    assert_eq!(first["prompt"], "fix src/");
}

#[test]
fn every_problem_is_reported_at_once() {
    let body = "version: 2\nmodel:\n  provider: nope\n  name: m\nprompt: 5\nextra: true\nlimits: {timeout: soon}\n";
    let (code, err) = check(body);
    assert_eq!(code, 2);
    for needle in [
        "model.provider",
        "extra: unknown field",
        "prompt: wrong type",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
}

#[test]
fn semantic_problems_are_all_reported() {
    let body = "version: 2\nmodel:\n  provider: script\n  name: m\n  script: missing.yaml\nprompt: hi\nlimits: {timeout: soon}\npermissions:\n  allow: ['Bash(']\n";
    let (code, err) = check(body);
    assert_eq!(code, 2);
    for needle in [
        "job.yaml:1:10: version: unsupported version 2",
        "model.script: script file not found",
        "job.yaml:7:19: limits.timeout: `soon` is not a duration",
        "job.yaml:9:11: permissions.allow[0]",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
}

#[test]
fn secret_values_are_never_echoed() {
    let body = format!("version: 1\n{GOOD_MODEL}  api_key: sk-live-SUPERSECRET123\nprompt: hi\n");
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    assert!(err.contains("model.api_key: unknown field"), "{err}");
    assert!(!err.contains("SUPERSECRET"), "{err}");
    let body =
        format!("version: 1\n{GOOD_MODEL}  max_tokens: sk-live-SUPERSECRET123\nprompt: hi\n");
    let (_, err) = check(&body);
    assert!(err.contains("model.max_tokens: wrong type"), "{err}");
    assert!(!err.contains("SUPERSECRET"), "{err}");
}

#[test]
fn validate_reports_and_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let good = write_job(tmp.path(), &format!("version: 1\n{GOOD_MODEL}prompt: hi\n"));
    std::fs::write(tmp.path().join("bad.yaml"), "version: 1\nprompt: 3\n").unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.arg("validate").arg(&good);
    assert_eq!(run(cmd, None).code, 0);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "--json"])
        .arg(&good)
        .arg(tmp.path().join("bad.yaml"));
    let r = run(cmd, None);
    assert_eq!(r.code, 2);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["valid"], false);
    let fields: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"model") && fields.contains(&"prompt"),
        "{fields:?}"
    );
}

#[test]
fn the_example_jobs_validate() {
    let root = crate::support::runner::repo_root();
    let mut cmd = cn_run(&root);
    cmd.arg("validate");
    for entry in std::fs::read_dir(root.join("jobs")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "yaml") {
            cmd.arg(p);
        }
    }
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
}
