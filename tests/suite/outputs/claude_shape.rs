//! "Same name means the same thing": every result.json field named like a field of
//! `claude -p --output-format json`'s result has that field's JSON type and meaning, field
//! by field; cn-run's extras sit beside them under names of their own.

use serde_json::Value;

use crate::support::runner::{cn_run, run, write_files};

/// Runs a scripted job with a cached-token usage report and two denied calls.
fn result_with_denials_and_cache() -> (i32, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let job =
        "version: 1\nname: shape\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\n";
    let script = "turns:\n  - tool_calls:\n      - {name: Bash, id: c1, arguments: {command: 'curl -s https://example.invalid/x'}}\n      - {name: Bash, id: c2, arguments: {command: 'wget -q https://example.invalid/'}}\n    usage: {input_tokens: 1000, output_tokens: 20, cache_read_tokens: 700, cache_write_tokens: 200}\n  - text: done\n    usage: {input_tokens: 500, output_tokens: 5, cache_read_tokens: 400}\n";
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg(tmp.path().join("job.yaml"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    (r.code, r.result())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[test]
fn every_field_named_like_claude_p_has_its_type() {
    let (code, r) = result_with_denials_and_cache();
    assert_eq!(code, 0, "{r}");
    // claude -p's result: name → JSON type.
    let fields: &[(&str, &str)] = &[
        ("/type", "string"),
        ("/subtype", "string"),
        ("/is_error", "boolean"),
        ("/duration_ms", "number"),
        ("/num_turns", "number"),
        ("/result", "string"),
        ("/session_id", "string"),
        ("/usage", "object"),
        ("/usage/input_tokens", "number"),
        ("/usage/cache_creation_input_tokens", "number"),
        ("/usage/cache_read_input_tokens", "number"),
        ("/usage/output_tokens", "number"),
        ("/permission_denials", "array"),
        ("/permission_denials/0/tool_name", "string"),
        ("/permission_denials/0/tool_use_id", "string"),
        ("/permission_denials/0/tool_input", "object"),
    ];
    for (pointer, want) in fields {
        let got = r.pointer(pointer).unwrap_or(&Value::Null);
        assert_eq!(kind(got), *want, "{pointer} is {got}");
    }
    // total_cost_usd is a number, or null when the price is unknown (never a silent 0).
    assert!(
        matches!(kind(&r["total_cost_usd"]), "number" | "null"),
        "{r}"
    );
    // The names cn-run used before are gone from the claude-named objects.
    for old in ["cache_read_tokens", "cache_write_tokens"] {
        assert!(r["usage"].get(old).is_none(), "{}", r["usage"]);
    }
    for old in ["tool", "call_id", "arguments"] {
        assert!(r["permission_denials"][0].get(old).is_none(), "{old}");
    }
}

#[test]
fn the_claude_named_fields_mean_what_claude_p_means() {
    let (_, r) = result_with_denials_and_cache();
    assert_eq!(r["type"], "result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["is_error"], false);
    assert_eq!(r["result"], "done");
    assert_eq!(r["num_turns"], 2);
    // input_tokens: what was neither read from nor written to the cache.
    let u = &r["usage"];
    assert_eq!(u["cache_read_input_tokens"], 1100);
    assert_eq!(u["cache_creation_input_tokens"], 200);
    assert_eq!(u["input_tokens"], 1500 - 1100 - 200);
    assert_eq!(u["output_tokens"], 25);
    // cn-run's extra: the whole prompt.
    assert_eq!(u["total_input_tokens"], 1500);
    let d = r["permission_denials"].as_array().unwrap();
    let names: Vec<(&str, &str)> = d
        .iter()
        .map(|d| {
            (
                d["tool_name"].as_str().unwrap(),
                d["tool_use_id"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("Bash", "c1"), ("Bash", "c2")], "{r}");
    assert_eq!(
        d[0]["tool_input"]["command"],
        "curl -s https://example.invalid/x"
    );
    assert_eq!(
        d[1]["tool_input"]["command"],
        "wget -q https://example.invalid/"
    );
    // cn-run's extras on each denial: which rule, its source and why.
    for extra in [
        "turn",
        "permission",
        "resolution",
        "rule",
        "source",
        "reason",
    ] {
        assert!(d[1].get(extra).is_some(), "{extra}: {}", d[1]);
    }
    assert_eq!(d[1]["permission"], "ask");
    assert_eq!(d[1]["allow_hint"], "Bash(wget*)");
}
