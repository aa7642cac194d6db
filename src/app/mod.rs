//! The dispatcher: one subcommand, one module. It only picks the command's module and
//! returns its exit code; what commands share lives in modules of its own (`console`,
//! `runtime`), and a job's run is the `run` pipeline (`crate::run`).

mod adhoc;
mod call_plan;
mod console;
mod explain;
mod explain_mcp;
mod export_cmd;
mod inspect;
mod parallel;
mod parallel_report;
mod report_cmd;
mod resume;
mod resume_latest;
mod run_cmd;
mod runs_cmd;
mod runtime;
mod schedule_cmd;
mod sessions;
mod validate;

use crate::cli::{Cli, Command};
use crate::observability::LogHandle;

/// Run the command line; returns the process exit code.
pub fn run(cli: Cli, log: &LogHandle) -> i32 {
    match cli.command {
        Some(Command::Validate(a)) => validate::run(&a),
        Some(Command::CheckCommand(a)) => inspect::check_command(&a),
        Some(Command::Explain(a)) => explain::explain(&a),
        Some(Command::Schema { which }) => inspect::schema(which),
        Some(Command::Sessions { action }) => sessions::run(&action),
        Some(Command::Schedule(a)) => schedule_cmd::run(&a),
        Some(Command::Export(a)) => export_cmd::run(&a),
        Some(Command::Report(a)) => report_cmd::run(&a),
        Some(Command::Runs(a)) => runs_cmd::run(&a),
        Some(Command::Sandbox(a)) => crate::sandbox::launcher_main(&a),
        Some(Command::Rollback { run, to, workspace }) => sessions::rollback(&run, to, workspace),
        Some(Command::Run(args)) => run_cmd::run_command(*args, log),
        None => run_cmd::run_command(cli.run, log),
    }
}

#[cfg(test)]
#[path = "catalogue_tests.rs"]
mod catalogue_tests;
#[cfg(test)]
#[path = "new_output_tests.rs"]
mod new_output_tests;
#[cfg(test)]
#[path = "new_provider_tests.rs"]
mod new_provider_tests;
