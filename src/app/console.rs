//! What a command says to the terminal: machine output on stdout (every registered secret
//! masked), and why it failed on stderr with the exit code its class gives.

use std::io::Write;

use crate::exit_code::Status;
use crate::run::start_error;

/// Print `text` to stdout, every registered secret masked (the one door to stdout); a
/// closed pipe is not an error worth a panic.
pub(crate) fn stdout(text: &str) {
    let text = crate::redact::redact_output(text);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Print `value` to stdout as indented JSON and a newline (through [`stdout`]).
pub(crate) fn stdout_json(value: &impl serde::Serialize) {
    stdout(&format!(
        "{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    ));
}

/// A usage error: say why on stderr, exit 2.
pub(crate) fn usage_error(message: &str) -> i32 {
    let message = crate::redact::redact_output(message);
    let _ = writeln!(std::io::stderr(), "cn-run: {message}");
    Status::Invalid.exit_code()
}

/// A run that could not start: say why on stderr; its class decides the exit code.
pub(crate) fn start_failed(e: start_error::RunError) -> i32 {
    let e = start_error::StartError::from(e);
    let _ = usage_error(&e.message);
    e.status.exit_code()
}
