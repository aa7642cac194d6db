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

/// Every `format` in a schema, with the path to it.
fn formats(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                if k == "format"
                    && let Some(f) = child.as_str()
                {
                    out.push((path.to_owned(), f.to_owned()));
                }
                formats(child, &format!("{path}/{k}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                formats(child, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The checked-in schemas compile with format assertions on and unknown formats refused,
/// and use only JSON Schema's own formats (ajv strict, check-jsonschema and
/// yaml-language-server refuse `uint32`, `double`…; `.ci/consumers` runs ajv itself).
#[test]
fn the_schemas_use_standard_formats_only_and_compile_strictly() {
    for which in ["job", "result", "event"] {
        let path = repo_root().join(format!("schemas/{which}.schema.json"));
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut found = Vec::new();
        formats(&schema, "#", &mut found);
        let odd: Vec<_> = found
            .iter()
            .filter(|(_, f)| !cn_run::json_schema::STANDARD_FORMATS.contains(&f.as_str()))
            .collect();
        assert!(odd.is_empty(), "{which}: non-standard formats {odd:?}");
        jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{which}: {e}"));
    }
    // The ranges the formats stood for are kept as bounds.
    let text = std::fs::read_to_string(repo_root().join("schemas/result.schema.json")).unwrap();
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    let version = &result["properties"]["schema_version"];
    assert_eq!(version["minimum"], 0, "{version}");
    assert_eq!(version["maximum"], u32::MAX, "{version}");
}
