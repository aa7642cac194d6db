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
        err.contains(
            "DIR/job.yaml:7:21: limits.max_turns: expected an integer, got the string \"many\""
        ),
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
    assert!(
        !err.contains("not a declared parameter"),
        "a declared parameter is reported once, as missing:\n{err}"
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
        "prompt: expected a string, got the integer 5",
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
    assert!(
        err.contains("model.max_tokens: expected an integer, got a string"),
        "{err}"
    );
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

/// `cn-run validate --json` on one job file: the problems as (line, column, field, message).
fn validate_json(body: &str) -> Vec<(u64, u64, String, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let job = write_job(tmp.path(), body);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "--json"]).arg(&job);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["line"].as_u64().unwrap(),
                p["column"].as_u64().unwrap(),
                p["field"].as_str().unwrap().to_owned(),
                p["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn type_errors_name_the_expected_and_the_given_shape() {
    let body = format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\nlimits:\n  max_turns: ten\nworkspace: 5\nrules: [[a]]\n"
    );
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    for needle in [
        "job.yaml:8:14: limits.max_turns: expected an integer, got the string \"ten\"",
        "job.yaml:9:12: workspace: expected a string or a mapping, got the integer 5",
        "job.yaml:10:9: rules[0]: expected a string or a mapping, got a list",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
    assert!(!err.contains("multiple("), "{err}");
    let problems = validate_json(&body);
    assert_eq!(
        problems[0],
        (
            8,
            14,
            "limits.max_turns".to_owned(),
            "expected an integer, got the string \"ten\"".to_owned()
        )
    );
}

#[test]
fn a_number_too_large_for_its_field_is_located() {
    let body = format!("version: 1\n{GOOD_MODEL}prompt: hi\nlimits:\n  max_turns: 99999999999\n");
    let problems = validate_json(&body);
    assert_eq!(
        problems,
        [(
            8,
            14,
            "limits.max_turns".to_owned(),
            "must be a whole number from 0 to 4294967295".to_owned()
        )]
    );
}

#[test]
fn a_word_outside_its_list_names_the_allowed_words() {
    let body = format!(
        "version: 1\n{GOOD_MODEL}  tool_call_format: xml\nprompt: hi\npermissions: {{on_ask: ask, mode: yolo}}\n"
    );
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    for needle in [
        "job.yaml:6:21: model.tool_call_format: must be one of: native, text",
        "job.yaml:8:23: permissions.on_ask: must be one of: deny, fail, allow",
        "job.yaml:8:34: permissions.mode: must be one of: headless, auto, plan, normal",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
    assert!(!err.contains("none of the allowed forms"), "{err}");
}

#[test]
fn an_unknown_field_close_to_a_known_one_gets_a_suggestion() {
    let (code, err) = check(&format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\npermisions:\n  allow: [Read]\ncolour: blue\n"
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "job.yaml:7:1: permisions: unknown field `permisions`; did you mean `permissions`?"
        ),
        "{err}"
    );
    assert!(
        err.contains("job.yaml:9:1: colour: unknown field `colour`\n"),
        "an unrelated name gets no suggestion:\n{err}"
    );
}

#[test]
fn problems_come_in_file_order() {
    // Resolution checks limits before permissions; the report must still read top-down.
    let body = format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\npermissions:\n  allow: ['Bash(']\nlimits: {{timeout: soon}}\n"
    );
    let problems = validate_json(&body);
    let fields: Vec<&str> = problems.iter().map(|p| p.2.as_str()).collect();
    assert_eq!(fields, ["permissions.allow[0]", "limits.timeout"]);
    let positions: Vec<(u64, u64)> = problems.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(positions, [(8, 11), (9, 19)]);
}

#[test]
fn rules_naming_unknown_tools_are_errors_with_the_fix() {
    let body = format!(
        "version: 1\n{GOOD_MODEL}prompt: hi\npermissions:\n  allow: ['edit(mathx.py)', Read, 'mcp__gh__*', 'Ed*']\n  ask:\n    - Edti(mathx.py)\n  exclude: [Teleport]\nsubagents:\n  - {{name: a, description: d, system_prompt: s, tools: [Raed]}}\n"
    );
    let (code, err) = check(&body);
    assert_eq!(code, 2);
    for needle in [
        "job.yaml:8:11: permissions.allow[0]: unknown tool `edit` in rule `edit(mathx.py)`; did you mean `Edit`?",
        "job.yaml:10:7: permissions.ask[0]: unknown tool `Edti` in rule `Edti(mathx.py)`; did you mean `Edit`?",
        "job.yaml:11:13: permissions.exclude[0]: unknown tool `Teleport` in rule `Teleport`; known tools: ",
        "job.yaml:13:57: subagents[0].tools[0]: unknown tool `Raed` in rule `Raed`; did you mean `Read`?",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
    assert_eq!(err.matches("unknown tool").count(), 4, "{err}");
}

#[test]
fn an_unknown_tool_on_the_command_line_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let job = write_job(tmp.path(), &format!("version: 1\n{GOOD_MODEL}prompt: hi\n"));
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job)
        .args(["--allow", "Read", "--exclude", "Wirte(x)"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr
            .contains("--exclude: unknown tool `Wirte` in rule `Wirte(x)`; did you mean `Write`?"),
        "{}",
        r.stderr
    );
    assert!(!tmp.path().join(".cn-run").exists(), "nothing may run");
}

#[test]
fn an_unknown_tool_in_the_repo_permissions_file_only_warns() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[(".continue/permissions.yaml", "allow:\n  - Raed\n")],
    );
    let job = write_job(tmp.path(), &format!("version: 1\n{GOOD_MODEL}prompt: hi\n"));
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&job).args(["--format", "json"]);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let warnings: Vec<String> = r
        .events_of("warning")
        .iter()
        .map(|e| e["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("unknown tool `Raed` in rule `Raed`; did you mean `Read`?")),
        "{warnings:?}"
    );
}

#[test]
fn thinking_and_azure_settings_follow_their_rules() {
    let cases = [
        (
            "  provider: anthropic\n  name: claude-sonnet-4-5\n  thinking: {budget_tokens: 500}\n",
            "model.thinking.budget_tokens: must be at least 1024",
        ),
        (
            "  provider: anthropic\n  name: claude-sonnet-4-5\n  max_tokens: 2000\n  thinking: {budget_tokens: 4000}\n",
            "model.max_tokens: must be above thinking.budget_tokens (4000)",
        ),
        (
            "  provider: openai\n  name: gpt-4o\n  thinking: {budget_tokens: 2048}\n",
            "model.thinking: is only for `provider: anthropic`",
        ),
        (
            "  provider: azure\n  name: gpt-4o\n",
            "model.api_base: `provider: azure` needs the resource URL",
        ),
        (
            "  provider: openai\n  name: gpt-4o\n  deployment: prod\n",
            "model.deployment: is only for `provider: azure`",
        ),
        (
            "  provider: openai\n  name: gpt-4o\n  api_version: 2024-10-21\n",
            "model.api_version: is only for `provider: azure`",
        ),
    ];
    for (model, want) in cases {
        let (code, err) = check(&format!("version: 1\nmodel:\n{model}prompt: hi\n"));
        assert_eq!(code, 2, "{model}: {err}");
        assert!(err.contains(want), "{model}\n  got: {err}");
    }
}

#[test]
fn model_settings_for_real_servers_validate() {
    let models = [
        "  provider: azure\n  name: gpt-4o\n  api_base: https://res.openai.azure.com\n  deployment: prod\n  api_version: 2024-10-21\n",
        "  provider: azure\n  name: gpt-4o\n  api_base: https://res.openai.azure.com\n  api_version: 2025-04-01-preview\n",
        "  provider: anthropic\n  name: claude-sonnet-4-5\n  thinking: {budget_tokens: 4096}\n",
        "  provider: anthropic\n  name: claude-sonnet-4-5\n  max_tokens: 5000\n  thinking: {type: enabled, budget_tokens: 4096}\n",
        "  provider: anthropic\n  name: claude-3-haiku\n  max_tokens: 1000\n  thinking: {type: disabled, budget_tokens: 0}\n",
        "  provider: openai\n  name: mistral-small-latest\n  api_base: https://api.mistral.ai/v1\n  stream_usage: false\n",
    ];
    for model in models {
        let tmp = tempfile::tempdir().unwrap();
        let job = write_job(
            tmp.path(),
            &format!("version: 1\nmodel:\n{model}prompt: hi\n"),
        );
        let mut cmd = cn_run(tmp.path());
        cmd.arg("validate").arg(&job);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{model}\n{}", r.stderr);
    }
}
