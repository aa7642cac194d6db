//! The cn-run binary: parse the command line, start logging, run, exit with the code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // The per-call supervisor inside the run's sandbox, when its own small binary
    // (`cn-run-call`) is not installed beside cn-run: before anything else.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == cn_run::sandbox::CALL_SUBCOMMAND)
    {
        let code = cn_run::sandbox::call_main(args.get(2..).unwrap_or_default());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = cn_run::cli::Cli::parse();
    let log = cn_run::observability::init(&cli.log);
    let code = cn_run::app::run(cli, &log);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
