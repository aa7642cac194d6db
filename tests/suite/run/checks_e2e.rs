//! Checks and retry, and structured output, end to end on the script provider.

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, run, write_files};

fn run_job(dir: &Path, job_rest: &str, script: &str) -> Run {
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: do it\n{job_rest}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", script)]);
    let mut cmd = cn_run(dir);
    cmd.arg(dir.join("job.yaml")).arg("-C").arg(dir);
    run(cmd, Some(&dir.join("out")))
}

#[test]
fn a_failed_check_goes_back_to_the_agent_and_the_second_attempt_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "checks:\n  - {name: fixed exists, run: 'test -f fixed.txt && echo present'}\nretry: {max_attempts: 2}\npermissions: {allow: ['Write(fixed.txt)']}\n",
        "turns:\n  - text: all done\n  - tool_calls: [{name: Write, arguments: {filepath: fixed.txt, content: ok}}]\n  - text: fixed now\n",
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["attempts"], 2);
    let checks = result["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2);
    assert_eq!(
        (checks[0]["attempt"].clone(), checks[0]["passed"].clone()),
        (Value::from(1), Value::from(false))
    );
    assert_eq!(
        (checks[1]["attempt"].clone(), checks[1]["passed"].clone()),
        (Value::from(2), Value::from(true))
    );
    assert!(
        checks[1]["output_tail"]
            .as_str()
            .unwrap()
            .contains("present")
    );
    assert_eq!(result["result"], "fixed now");
    // The failure was sent back to the agent as a message of the same conversation.
    let session = crate::support::runner::session_of(&tmp.path().join("out"));
    let feedback = session["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user" && m["content"].as_str().unwrap().contains("fixed exists"))
        .expect("feedback message in the history");
    assert!(
        feedback["content"]
            .as_str()
            .unwrap()
            .contains("attempt 1 of 2")
    );
    assert_eq!(r.events_of("attempt.started").len(), 1);
}

#[test]
fn checks_that_never_pass_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "checks:\n  - {name: always red, run: 'echo nope >&2; exit 3'}\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: done\n  - text: done again\n",
    );
    assert_eq!(r.code, 1, "{r:#?}");
    let result = r.result();
    assert_eq!(result["status"], "failed");
    assert!(result["reason"].as_str().unwrap().contains("always red"));
    assert_eq!(result["checks"][1]["exit_code"], 3);
    assert!(
        result["checks"][0]["output_tail"]
            .as_str()
            .unwrap()
            .contains("nope")
    );
}

const SCHEMA: &str = "output_schema:\n  type: object\n  required: [files_changed]\n  properties: {files_changed: {type: integer}}\n";

#[test]
fn structured_output_valid_repaired_and_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        SCHEMA,
        "turns:\n  - text: '{\"files_changed\": 2}'\n",
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["structured_output"]["files_changed"], 2);

    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        SCHEMA,
        "turns:\n  - text: I changed two files.\n  - text: '{\"files_changed\": 2}'\n",
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["structured_output"]["files_changed"], 2);
    let validations = r.events_of("output.validated");
    assert_eq!(validations.len(), 2);
    assert_eq!(validations[0]["valid"], false);

    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        SCHEMA,
        "turns:\n  - text: two\n  - text: '{\"files_changed\": \"two\"}'\n",
    );
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(
        r.result()["reason"]
            .as_str()
            .unwrap()
            .contains("output_schema")
    );
    assert_eq!(r.result()["structured_output"], Value::Null);
}
