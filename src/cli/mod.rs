//! The command line: `cn-run JOB…` (same as `cn-run run JOB…`), an ad-hoc `-p PROMPT`, and
//! the subcommands around it. Parsing only; `app` does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::PolicyArgs;

mod export_args;
mod run_args;

pub use export_args::{
    ExportArgs, ExportCommon, ExportTarget, GithubExportArgs, K8sExportArgs, K8sJobArgs,
};
pub use run_args::{ForeignFlags, RunArgs};

#[derive(Debug, Parser)]
#[command(
    name = "cn-run",
    version,
    about = "Run an LLM coding agent headless, from a YAML job file, for CI.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one or more jobs (the default command).
    Run(Box<RunArgs>),
    /// Check job files: schema, templates, files they name. Exit 2 on any problem.
    Validate(ValidateArgs),
    /// Classify shell commands with the Bash safety evaluator.
    CheckCommand(CheckCommandArgs),
    /// Show the effective policy, limits and tools of a job, and where each came from.
    Explain(ExplainArgs),
    /// Print a JSON schema: the job file, the result, or the events.
    Schema {
        /// Which schema: `job`, `result` or `event`.
        #[arg(value_enum)]
        which: SchemaKind,
    },
    /// Restore the workspace of a run to one of its git checkpoints (default: the start).
    Rollback {
        /// `latest`, or a run id.
        run: String,
        /// The checkpoint to restore (0 = the start of the run).
        #[arg(long)]
        to: Option<u32>,
        /// The workspace (default: the one recorded in the run's session).
        #[arg(short = 'C', long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// List or show the sessions of earlier runs (under .cn-run/).
    Sessions {
        #[command(subcommand)]
        action: SessionsAction,
    },
    /// Start jobs on their `schedule:` in the foreground; `--list` shows the next run times.
    Schedule(ScheduleArgs),
    /// Write a GitHub Actions workflow or Kubernetes CronJobs that run jobs on their cron.
    Export(Box<ExportArgs>),
    /// Rebuild result.json and junit.xml of a run folder from its events.jsonl.
    Report(ReportArgs),
    /// The runs a run store holds, with their outcome and cost.
    Runs(RunsArgs),
    /// Internal: the Bash sandbox launcher (restricts itself, then runs the command).
    #[command(name = "__sandbox", hide = true)]
    Sandbox(crate::sandbox::SandboxArgs),
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// Sessions, newest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One session: `latest`, a run id or a path.
    Show {
        /// `latest`, a run id, or the path of a run folder or session file.
        id: String,
        /// Print the whole session file.
        #[arg(long)]
        json: bool,
    },
    /// Remove runs' git checkpoints (hidden refs) and the objects only they held; prints
    /// what was removed as JSON. Without RUN or --keep, every run's.
    Prune {
        /// Run ids whose checkpoints to remove.
        runs: Vec<String>,
        /// Keep the checkpoints of the N newest runs, remove the rest.
        #[arg(long, value_name = "N", conflicts_with = "runs")]
        keep: Option<usize>,
        /// A folder inside the repository (default: the current one).
        #[arg(short = 'C', long, value_name = "DIR")]
        workspace: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    Job,
    Result,
    Event,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Isolate {
    None,
    Worktree,
}

/// `--html on|off`: whether the run folder gets report.html (overrides the job's
/// `outputs.html`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The final answer only.
    #[default]
    Text,
    /// The result object.
    Json,
    /// One event per line, ending with the result object.
    StreamJson,
}

#[derive(Debug, Clone, Default, Args)]
pub struct LogArgs {
    /// More logging on stderr (repeat for more).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// No progress lines on stderr (errors are still shown).
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// Job files to check (every problem of every file is reported).
    #[arg(required = true)]
    pub jobs: Vec<PathBuf>,
    /// Parameter values to validate with.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Print the problems as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CheckCommandArgs {
    /// The command to check (omit with --jsonl to read commands from stdin).
    pub command: Option<String>,
    /// Read one command per stdin line (a line starting with `"` is a JSON string) and
    /// print one JSON object per line.
    #[arg(long)]
    pub jsonl: bool,
    /// Judge as run without an enforced sandbox: build and test steps, which run
    /// repository-defined code, then need permission (default: as a run here would, after
    /// probing what this machine's sandbox enforces).
    #[arg(long, conflicts_with = "contained")]
    pub uncontained: bool,
    /// Judge as run in a fully enforced sandbox, whatever this machine enforces.
    #[arg(long)]
    pub contained: bool,
    /// Judge as a read-only run that no sandbox keeps read-only: commands that may write
    /// need permission.
    #[arg(long)]
    pub readonly: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The job file to explain.
    pub job: PathBuf,
    /// The policy flags, as `cn-run` takes them: explain the job as a run with them would
    /// enforce it.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Why a `--param` is not `NAME=VALUE` (clap says it with the flag: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    #[error("expected NAME=VALUE, got `{0}`")]
    NoEquals(String),
    #[error("parameter name is empty")]
    EmptyName,
}

pub(crate) fn parse_param(s: &str) -> Result<(String, String), ParamError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| ParamError::NoEquals(s.to_owned()))?;
    if k.is_empty() {
        return Err(ParamError::EmptyName);
    }
    Ok((k.to_owned(), v.to_owned()))
}

#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    /// Folders of job files (`*.yaml` directly inside), or job files.
    #[arg(required = true, value_name = "DIR|JOB")]
    pub paths: Vec<PathBuf>,
    /// Print each job's next run times and exit.
    #[arg(long)]
    pub list: bool,
    /// Start what is due now (or missed, per each job's policy), wait for it, exit with the
    /// worst exit code.
    #[arg(long, conflicts_with = "list")]
    pub once: bool,
    /// With --list: next run times per job.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub count: usize,
    /// With --list: the run times after this instant rather than now (RFC 3339, e.g.
    /// 2026-03-29T00:00:00Z), to see a daylight-saving night ahead of time.
    #[arg(long, value_name = "TIME", requires = "list")]
    pub from: Option<jiff::Timestamp>,
    /// With --list: print JSON.
    #[arg(long)]
    pub json: bool,
    /// State, heartbeat and run logs (default: DIR/.cn-run/schedule for the first DIR).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Timeout of jobs without `limits.timeout`.
    #[arg(long, default_value = "6h", value_name = "DURATION")]
    pub default_timeout: String,
    /// A run still going this long after its timeout is killed.
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub reap_grace: String,
    /// On SIGTERM/SIGINT, how long to wait for running jobs before killing them.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub stop_timeout: String,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run folder (or a run id under .cn-run/, or `latest`).
    pub run: String,
    /// Write the HTML report here instead of the run folder's report.html.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the run as an ATIF trajectory (Harbor's Agent Trajectory Interchange
    /// Format) here.
    #[arg(long, value_name = "FILE")]
    pub atif: Option<PathBuf>,
    /// Also append the step summary and step outputs to $GITHUB_STEP_SUMMARY and
    /// $GITHUB_OUTPUT, and print the annotations on stderr.
    #[arg(long)]
    pub github: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// The run store: `s3://BUCKET/PREFIX`, `gs://…`, `az://…` or a path.
    #[arg(long, value_name = "URL")]
    pub store: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every argument of every (sub)command a person can see has a description.
    fn undescribed(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if arg.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                out.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_about().is_none() {
                out.push(format!("{path} {} (the command itself)", sub.get_name()));
            }
            undescribed(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_flag_of_every_command_has_a_description() {
        let mut missing = Vec::new();
        undescribed(&Cli::command(), "cn-run", &mut missing);
        assert!(missing.is_empty(), "without a description: {missing:#?}");
    }

    #[test]
    fn flags_of_other_agents_are_taken_or_pointed_at_cn_runs_own() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["cn-run"];
            argv.extend(args);
            Cli::try_parse_from(argv).unwrap().run.normalized()
        };
        let a = parse(&["j.yaml", "--output-format", "json"]).unwrap();
        assert_eq!(a.format, Format::Json);
        let a = parse(&["j.yaml", "--json"]).unwrap();
        assert_eq!(a.format, Format::StreamJson);
        let a = parse(&["j.yaml", "--cd", "sub", "--full-auto"]).unwrap();
        assert_eq!(
            a.settings.policy.workspace,
            Some(std::path::absolute("sub").unwrap()),
            "--cd is -C, made absolute as every path flag"
        );
        assert!(a.settings.policy.auto);
        let a = parse(&["--continue", "-p", "go on"]).unwrap();
        assert_eq!(a.resume.as_deref(), Some("latest"));
        for (flag, pointer) in [
            (&["--dangerously-skip-permissions"][..], "--auto"),
            (
                &["--dangerously-bypass-approvals-and-sandbox"][..],
                "--auto",
            ),
            (&["--allowedTools", "Bash Edit"][..], "--allow"),
            (&["--disallowedTools", "Fetch"][..], "--exclude"),
            (&["--permission-mode", "acceptEdits"][..], "--readonly"),
            (&["--ask-for-approval", "never"][..], "--on-ask"),
            (&["--sandbox", "workspace-write"][..], "tools.bash.sandbox"),
            (&["--output-last-message", "f.txt"][..], "result.json"),
        ] {
            let mut args = vec!["j.yaml"];
            args.extend(flag);
            let said = parse(&args).unwrap_err();
            assert!(
                said.starts_with(&format!("{} is not a cn-run flag: ", flag[0])),
                "{said}"
            );
            assert!(said.contains(pointer), "{said}");
        }
    }
}
