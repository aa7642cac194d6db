//! Fuzz target: the Bash command safety evaluator on arbitrary text.
//!
//! Besides "no panic, no hang", two properties a policy relies on: the verdict is never
//! less strict than the base level it is given, and appending `; rm -rf /` to a command
//! never makes it less strict (a model cannot launder a command by adding to it). Found
//! so far: an unterminated here-document hid its command (fixed, see
//! `tests/suite/codebase/fuzz_regressions.rs`).
#![no_main]

use cn_run::command_safety::{Level, evaluate, evaluate_with_base};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let verdict = evaluate(command);
    assert!(
        !verdict.reason.is_empty(),
        "{command:?}: a verdict without a reason"
    );
    let asked = evaluate_with_base(Level::AllowedWithPermission, Some(command));
    assert!(
        asked.level >= Level::AllowedWithPermission,
        "{command:?}: {asked:?}"
    );
    assert!(
        asked.level >= verdict.level,
        "{command:?}: {asked:?} < {verdict:?}"
    );
    // After an odd number of trailing backslashes the `;` is escaped and the tail is more
    // arguments, not a command (`echo a\; rm -rf /` prints): no property to check.
    let trailing = command.len() - command.trim_end_matches('\\').len();
    if trailing % 2 == 1 {
        return;
    }
    let worse = evaluate(&format!("{command}; rm -rf /"));
    assert!(
        worse.level >= verdict.level,
        "{command:?}: appending `; rm -rf /` lowered {verdict:?} to {worse:?}"
    );
});
