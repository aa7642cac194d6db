//! The attack classes of the safety model as data (`tests/fixtures/policy_classes.json`): for
//! each class, commands that once slipped through (and variants of them) with the level the
//! evaluator must give, or the decision the policy must reach under the given rules and mode.
//! Every class holds at least five cases; every mismatch is printed before the test fails.
//! Every case's command also has one reading: the parts the rule matcher sees agree with the
//! evaluator's verdict on the whole (`one_reading_holds`).

use std::path::Path;

use cn_run::command_safety::{Context, Level, evaluate_in, one_reading_holds};
use cn_run::permissions::{Mode, Permission, Policy, PolicyInput, RuleSpec};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/policy_classes.json"
);

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(FIXTURE).unwrap_or_else(|e| panic!("{FIXTURE}: {e}"));
    let all: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{FIXTURE}: {e}"));
    all.as_array().cloned().unwrap_or_default()
}

fn field<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key].as_str().unwrap_or_default()
}

fn specs(case: &Value, key: &str, permission: Permission) -> Vec<RuleSpec> {
    let list = case["rules"][key].as_array().cloned().unwrap_or_default();
    list.iter()
        .filter_map(Value::as_str)
        .map(|p| RuleSpec::new(p, permission))
        .collect()
}

fn context(case: &Value) -> Context {
    Context {
        contained: case["contained"].as_bool().unwrap_or(true),
        read_only: case["readonly"].as_bool().unwrap_or(false),
    }
}

/// The policy's decision on the case's command, or `None` when the case is about the level.
fn decision(case: &Value) -> Option<Permission> {
    case.get("decision")?;
    let mode: Mode = serde_json::from_value(json!(field(case, "mode"))).unwrap_or_default();
    let mut cli = specs(case, "exclude", Permission::Exclude);
    cli.extend(specs(case, "ask", Permission::Ask));
    cli.extend(specs(case, "allow", Permission::Allow));
    let input = PolicyInput {
        mode,
        cli,
        ..PolicyInput::default()
    };
    let policy = Policy::build(input, Path::new("/WS"))
        .unwrap_or_else(|e| panic!("policy of {case}: {e}"))
        .with_context(context(case));
    let args = json!({ "command": field(case, "command") });
    Some(policy.check("Bash", &args, None).permission)
}

fn check(case: &Value) -> Result<(), String> {
    let command = field(case, "command");
    one_reading_holds(command).map_err(|e| e.to_string())?;
    if let Some(got) = decision(case) {
        let want: Permission = serde_json::from_value(case["decision"].clone())
            .map_err(|e| format!("bad decision in {case}: {e}"))?;
        return (got == want)
            .then_some(())
            .ok_or(format!("{command:?}: decided {got:?}, want {want:?}"));
    }
    let want: Level = serde_json::from_value(case["level"].clone())
        .map_err(|e| format!("bad level in {case}: {e}"))?;
    let got = evaluate_in(command, context(case));
    (got.level == want)
        .then_some(())
        .ok_or(format!("{command:?}: {got:?}, want {want:?}"))
}

#[test]
fn every_class_of_the_safety_model_holds() {
    let cases = cases();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            check(c)
                .err()
                .map(|e| format!("[{}] {e}", field(c, "class")))
        })
        .collect();
    for failure in &failures {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail",
        failures.len(),
        cases.len()
    );
}

#[test]
fn every_class_has_at_least_five_cases() {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for case in cases() {
        *counts.entry(field(&case, "class").to_owned()).or_default() += 1;
    }
    assert!(counts.len() >= 7, "{counts:?}");
    for (class, n) in counts {
        assert!(n >= 5, "class {class} has only {n} cases");
    }
}
