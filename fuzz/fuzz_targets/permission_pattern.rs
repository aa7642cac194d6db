//! Fuzz target: permission rule patterns and their matching.
//!
//! Input layout (text): rules, one per line, each `allow:`, `ask:` or `exclude:` followed by
//! a pattern (a line without a prefix is an allow rule); then a `\0`; then calls, one per
//! line, `Tool<TAB>argument` (the argument becomes the tool's governing argument, or, when
//! it is a JSON object, the whole argument object). Building the policy must end in a policy
//! or an error naming the pattern; checking a call must give a decision with a reason.
#![no_main]

use std::path::Path;

use cn_run::permissions::{
    Mode, Permission, Policy, PolicyInput, RuleSpec, argument_key, parse_rule_pattern,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fn rule(line: &str) -> RuleSpec {
    let (permission, pattern) = match line.split_once(':') {
        Some(("allow", p)) => (Permission::Allow, p),
        Some(("ask", p)) => (Permission::Ask, p),
        Some(("exclude", p)) => (Permission::Exclude, p),
        _ => (Permission::Allow, line),
    };
    RuleSpec::new(pattern, permission)
}

fn arguments(tool: &str, arg: &str) -> Value {
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(arg) {
        return value;
    }
    let mut map = Map::new();
    map.insert(
        argument_key(tool).unwrap_or("command").to_owned(),
        Value::String(arg.to_owned()),
    );
    Value::Object(map)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (rules, calls) = text.split_once('\0').unwrap_or((text, ""));
    let rules: Vec<RuleSpec> = rules.lines().map(rule).collect();
    for spec in &rules {
        let _ = parse_rule_pattern(&spec.pattern);
    }
    for mode in [Mode::Headless, Mode::Auto, Mode::Plan] {
        let input = PolicyInput {
            mode,
            job: rules.clone(),
            ..PolicyInput::default()
        };
        let Ok(policy) = Policy::build(input, Path::new("/fuzz/workspace")) else {
            return;
        };
        for line in calls.lines() {
            let (tool, arg) = line.split_once('\t').unwrap_or((line, ""));
            let decision = policy.check(tool, &arguments(tool, arg), None);
            assert!(!decision.reason.is_empty(), "{tool} {arg}: no reason");
            let _ = policy.is_offered(tool);
        }
    }
});
