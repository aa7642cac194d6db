//! Unit tests of the evaluator as a whole: verdicts, rules and reasons for representative
//! commands of every family.

use super::*;

fn level(command: &str) -> Level {
    evaluate(command).level
}

#[test]
fn placeholder() {
    assert_eq!(level("ls"), Level::AllowedWithoutPermission);
}
