//! `cn-run-call -- PROGRAM ARGS…`: the per-call supervisor inside the run's one sandbox
//! (`src/sandbox/call.rs`), as a binary of its own because it starts once per command and
//! cn-run is large to start.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = cn_run::sandbox::call_main(&args);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
