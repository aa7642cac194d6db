//! Fault injection for the test suite, compiled only into debug builds: a panic raised
//! from inside the agent loop at a chosen point, so a test can show end to end that a run
//! that panics still exits 6 and leaves result.json and its session. No input makes the
//! runner panic on its own (that would be a bug), hence this hook.
//!
//! `CN_RUN_TEST_PANIC=POINT:N` panics when turn N passes `POINT`: `after_response` (the
//! model answered, before any tool runs), `tool_finished` (a tool's result is in, the
//! turn's other calls may still run), `after_turn`. Release builds read no such variable.

/// Panic here if the test fault names this point and turn.
#[cfg(debug_assertions)]
pub(crate) fn point(name: &str, turn: u32) {
    let Ok(wanted) = std::env::var("CN_RUN_TEST_PANIC") else {
        return;
    };
    if wanted == format!("{name}:{turn}") {
        panic!("injected test fault at {name} of turn {turn} (CN_RUN_TEST_PANIC)");
    }
}

/// Release builds: no fault injection.
#[cfg(not(debug_assertions))]
pub(crate) fn point(_name: &str, _turn: u32) {}
