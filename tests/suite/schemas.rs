//! The JSON schemas in `schemas/` are generated from the types; this fails when a checked-in
//! file has drifted. `UPDATE_SCHEMAS=1 cargo test schemas` rewrites them.

use crate::support::runner::{cn_run, repo_root, run};

fn check(which: &str) {
    let mut cmd = cn_run(&repo_root());
    cmd.args(["schema", which]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let generated: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let path = repo_root().join(format!("schemas/{which}.schema.json"));
    if std::env::var("UPDATE_SCHEMAS").is_ok_and(|v| v == "1") {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&generated).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let checked_in: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is out of date; run `UPDATE_SCHEMAS=1 cargo test schemas` and commit it",
        path.display()
    );
}

#[test]
fn job_schema_is_current() {
    check("job");
}

#[test]
fn result_schema_is_current() {
    check("result");
}

#[test]
fn event_schema_is_current() {
    check("event");
}

#[test]
fn the_example_jobs_match_the_job_schema() {
    let text = std::fs::read_to_string(repo_root().join("schemas/job.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for entry in std::fs::read_dir(repo_root().join("jobs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let job: serde_json::Value =
                serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let errors: Vec<String> = validator.iter_errors(&job).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        }
    }
}
