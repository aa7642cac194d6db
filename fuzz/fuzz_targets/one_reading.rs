//! Fuzz target: one reading of every command. For arbitrary text, the parts the permission
//! rules are matched against are exactly the commands the evaluator judged (see
//! `cn_run::command_safety::one_reading_holds`): the two views of a command cannot drift
//! apart, because there is only one.
#![no_main]

use cn_run::command_safety::one_reading_holds;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(broken) = one_reading_holds(command) {
        panic!("{broken}");
    }
});
