//! The cn-run binary: parse the command line, start logging, run, exit with the code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cn_run::cli::Cli::parse();
    let log = cn_run::observability::init(&cli.log);
    let code = cn_run::app::run(cli, log);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
