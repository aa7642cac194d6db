//! A run end to end: limits, signals, start failures, parallel runs, checks, exit codes.

mod checks_e2e;
mod limits_e2e;
mod newcomer_e2e;
mod panic_e2e;
mod parallel_e2e;
mod run_e2e;
mod run_lock_e2e;
mod signals_e2e;
mod start_failures_e2e;
mod typed_errors_e2e;

use super::outputs::junit_shape;
