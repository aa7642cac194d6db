//! The Bash command-safety evaluator as a user meets it. First Continue's own 224 test cases
//! (`terminal_security.json`), replayed against cn-run's evaluator: every mismatch is printed, and
//! each must be one of the documented divergences (`terminal_security.divergences.json`), which in
//! turn must still diverge. Then cn-run's three corrections to Continue (secrets, fork bombs, CI
//! build/test/lint commands) and monotonicity checks: adding a dangerous part never makes a
//! command look safer.

use cn_run::command_safety::{Level, Verdict, evaluate, evaluate_with_base};
use serde_json::Value;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/terminal_security.json"
);
const DIVERGENCES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/terminal_security.divergences.json"
);

/// The reasons a divergence from Continue may have.
const ALLOWED_REASONS: &[&str] = &["secrets", "fork bomb", "CI build/test/lint"];

fn load(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

fn level_of(value: &Value) -> Level {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("level {value}: {e}"))
}

fn name(level: Level) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A divergence listed in the fixture, keyed by command.
struct Divergence {
    command: String,
    continue_level: Level,
    ours: Level,
}

fn divergences() -> Vec<Divergence> {
    let list = load(DIVERGENCES);
    let list = list.as_array().unwrap_or_else(|| panic!("{DIVERGENCES} is not an array"));
    list.iter()
        .map(|d| {
            let reason = d["reason"].as_str().unwrap_or_default();
            assert!(
                ALLOWED_REASONS.iter().any(|r| reason.starts_with(r)),
                "divergence {d} must start its reason with one of {ALLOWED_REASONS:?}"
            );
            Divergence {
                command: d["command"].as_str().unwrap_or_default().to_owned(),
                continue_level: level_of(&d["continue"]),
                ours: level_of(&d["ours"]),
            }
        })
        .collect()
}

#[test]
fn continue_conformance_cases_match_or_are_listed_divergences() {
    let cases = load(FIXTURE);
    let cases = cases.as_array().unwrap_or_else(|| panic!("{FIXTURE} is not an array"));
    assert_eq!(cases.len(), 224, "the fixture should hold Continue's 224 cases");
    let listed = divergences();
    let mut used = vec![false; listed.len()];
    let (mut matched, mut unexplained) = (0usize, Vec::new());
    for case in cases {
        let command = case["command"].as_str();
        let base = level_of(&case["base_policy"]);
        let expected = level_of(&case["expected"]);
        let got = evaluate_with_base(base, command);
        if got.level == expected {
            matched += 1;
            continue;
        }
        let line = format!(
            "MISMATCH {:?}\n  case: {}\n  expected {}, got {} by {}: {}",
            command,
            case["source"].as_str().unwrap_or_default(),
            name(expected),
            name(got.level),
            got.rule,
            got.reason
        );
        println!("{line}");
        let known = listed.iter().position(|d| {
            Some(d.command.as_str()) == command && d.continue_level == expected && d.ours == got.level
        });
        match known {
            Some(k) => used[k] = true,
            None => unexplained.push(line),
        }
    }
    println!("{matched}/{} cases match Continue", cases.len());
    assert!(unexplained.is_empty(), "unlisted mismatches:\n{}", unexplained.join("\n"));
    let stale: Vec<&str> = listed
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(d, _)| d.command.as_str())
        .collect();
    assert!(stale.is_empty(), "listed divergences that no longer diverge: {stale:?}");
    assert!(matched * 100 >= cases.len() * 97, "only {matched} of {} match", cases.len());
}

fn assert_level(command: &str, expected: Level) -> Verdict {
    let verdict = evaluate(command);
    assert_eq!(verdict.level, expected, "{command:?}: {} — {}", verdict.rule, verdict.reason);
    verdict
}
