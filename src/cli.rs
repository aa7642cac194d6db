//! The command line: `cn-run JOB…` (same as `cn-run run JOB…`), an ad-hoc `-p PROMPT`, and
//! the subcommands around it. Parsing only; `app` does the work.

use std::path::PathBuf;

use crate::config::{PolicyArgs, Settings};
use clap::{Args, Parser, Subcommand, ValueEnum};

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
pub struct RunArgs {
    /// Job files to run.
    pub jobs: Vec<PathBuf>,
    /// Run an ad-hoc job with this prompt instead of a job file (`-` reads it from stdin).
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// What to print on stdout (`--output-format`, as `claude -p` spells it, works too).
    #[arg(long, alias = "output-format", value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print one event per line (`--format stream-json`), as `codex exec --json` does.
    #[arg(long)]
    pub json: bool,
    /// Output folder of the run (default .cn-run/<run-id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the JUnit report here (one testsuite per job).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Whether each run folder gets report.html, the run as one self-contained page
    /// (default: the job's `outputs.html`, else on).
    #[arg(long, value_enum, value_name = "on|off")]
    pub html: Option<Switch>,
    /// Run up to N jobs at the same time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub parallel: usize,
    /// Give each run its own git worktree (`worktree`, the default with more than one job)
    /// or run in the workspace itself (`none`).
    #[arg(long, value_enum)]
    pub isolate: Option<Isolate>,
    /// Continue an earlier run (`latest` or a run id) where it stopped.
    #[arg(long, value_name = "RUN")]
    pub resume: Option<String>,
    /// Continue the latest run (`--resume latest`), as `claude -p --continue` does.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// With `--resume`: run the deferred call ID (its `tool_use_id` in result.json's
    /// `pending_approvals`) exactly as the model made it. Repeatable.
    #[arg(long, value_name = "ID", requires = "resume")]
    pub approve: Vec<String>,
    /// With `--resume`: refuse the deferred call ID; the model is told (with `--reason`).
    /// Repeatable.
    #[arg(long, value_name = "ID", requires = "resume")]
    pub deny: Vec<String>,
    /// Why the calls of `--deny` were refused (the model reads it).
    #[arg(long, value_name = "TEXT", requires = "deny")]
    pub reason: Option<String>,
    /// Flags of other agents' command lines that cn-run answers with its own.
    #[command(flatten)]
    pub foreign: ForeignFlags,
    /// How many jobs this call runs (set by the runner, not a flag): the GitHub step
    /// summary is shared between them, and step outputs are written once for all.
    #[arg(skip)]
    pub jobs_in_call: usize,
    /// The run-shaping flags (what a session keeps for `--resume`).
    #[command(flatten)]
    pub settings: Settings,
}

/// Flags people bring from `claude -p` and `codex exec` that mean something cn-run does
/// otherwise (or not at all): taken, hidden, only to say what to use instead.
#[derive(Debug, Clone, Default, Args)]
pub struct ForeignFlags {
    #[arg(long = "dangerously-skip-permissions", hide = true)]
    skip_permissions: bool,
    #[arg(long = "dangerously-bypass-approvals-and-sandbox", hide = true)]
    bypass_sandbox: bool,
    #[arg(
        long = "allowedTools",
        alias = "allowed-tools",
        hide = true,
        value_name = "TOOLS"
    )]
    allowed_tools: Option<String>,
    #[arg(
        long = "disallowedTools",
        alias = "disallowed-tools",
        hide = true,
        value_name = "TOOLS"
    )]
    disallowed_tools: Option<String>,
    #[arg(long = "permission-mode", hide = true, value_name = "MODE")]
    permission_mode: Option<String>,
    #[arg(long = "ask-for-approval", hide = true, value_name = "POLICY")]
    ask_for_approval: Option<String>,
    #[arg(long = "sandbox", hide = true, value_name = "MODE")]
    sandbox: Option<String>,
    #[arg(long = "output-last-message", hide = true, value_name = "FILE")]
    output_last_message: Option<String>,
}

impl ForeignFlags {
    /// What to use instead of the first foreign flag given, if any.
    pub fn pointer(&self) -> Option<String> {
        let said = [
            (
                self.skip_permissions,
                "--dangerously-skip-permissions",
                SKIP_ALL,
            ),
            (
                self.bypass_sandbox,
                "--dangerously-bypass-approvals-and-sandbox",
                SKIP_ALL,
            ),
            (
                self.allowed_tools.is_some(),
                "--allowedTools",
                "cn-run takes one pattern per --allow, e.g. --allow 'Bash(git *)' --allow Edit",
            ),
            (
                self.disallowed_tools.is_some(),
                "--disallowedTools",
                "cn-run takes one pattern per --exclude, e.g. --exclude Fetch",
            ),
            (
                self.permission_mode.is_some(),
                "--permission-mode",
                "cn-run's modes are flags: --auto (allow all but disabled commands), \
                 --readonly (plan mode), or neither (headless: the job's rules, on_ask decides)",
            ),
            (
                self.ask_for_approval.is_some(),
                "--ask-for-approval",
                "nobody answers in a headless run: --on-ask deny|fail|allow says what a call \
                 needing approval does",
            ),
            (
                self.sandbox.is_some(),
                "--sandbox",
                "containment is the job's tools.bash.sandbox (workspace-write, read-only or \
                 off); --readonly asks for a read-only one, --require-sandbox refuses to run \
                 without it",
            ),
            (
                self.output_last_message.is_some(),
                "--output-last-message",
                "the final answer is on stdout with --format text and in result.json's \
                 `result` (in the run folder; --out DIR chooses it)",
            ),
        ];
        said.into_iter()
            .find(|(given, _, _)| *given)
            .map(|(_, flag, what)| format!("{flag} is not a cn-run flag: {what}"))
    }
}

/// What cn-run says to a flag that would turn every check off.
const SKIP_ALL: &str = "no switch turns every check off. --auto allows every call the Bash \
     evaluator does not disable, with commands still contained; allow more with \
     --allow PATTERN or the job's permissions.allow (README: Safety)";

impl RunArgs {
    /// The flags as cn-run's own: `--json`, `--continue` and `--full-auto` said the cn-run
    /// way; a foreign flag is refused with what to use instead.
    pub fn normalized(mut self) -> Result<RunArgs, String> {
        if let Some(pointer) = self.foreign.pointer() {
            return Err(pointer);
        }
        if self.json {
            self.format = Format::StreamJson;
        }
        if self.continue_latest {
            self.resume = Some("latest".to_owned());
        }
        self.settings = self.settings.as_given();
        Ok(self)
    }
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

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub target: ExportTarget,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ExportTarget {
    /// A workflow with `on: schedule` that runs each job with the cn-run action.
    GithubWorkflow(GithubExportArgs),
    /// Kubernetes CronJobs (one per job) and a ConfigMap holding the job files.
    K8sCronjob(K8sExportArgs),
    /// One Kubernetes Indexed Job running many job files (one pod each) and their ConfigMap.
    K8sJob(K8sJobArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ExportCommon {
    /// Job files, each with a `schedule:`. Paths are used as written (run from the repo root).
    #[arg(required = true)]
    pub jobs: Vec<PathBuf>,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A job parameter for every exported run: `--param path=src/`.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Clone, Args)]
pub struct GithubExportArgs {
    #[command(flatten)]
    pub common: ExportCommon,
    /// The cn-run action, `OWNER/REPO@REF`.
    #[arg(long, default_value = "cn-run/cn-run@v1", value_name = "ACTION")]
    pub action: String,
    /// The runner label.
    #[arg(long, default_value = "ubuntu-latest", value_name = "LABEL")]
    pub runs_on: String,
    /// The workflow's name.
    #[arg(long, default_value = "cn-run scheduled jobs")]
    pub name: String,
    /// One matrix over every job file (jobs need no schedule), each run folder an artifact,
    /// the combined JUnit and summary in a final job.
    #[arg(long)]
    pub matrix: bool,
    /// With --matrix: also run on this cron line (UTC).
    #[arg(long, value_name = "CRON", requires = "matrix")]
    pub cron: Option<String>,
    /// With --matrix: at most N runs at once.
    #[arg(long, value_name = "N", requires = "matrix")]
    pub max_parallel: Option<u32>,
    /// The run store each run writes its folder to (`--store` of cn-run).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct K8sExportArgs {
    #[command(flatten)]
    pub common: ExportCommon,
    /// The cn-run container image (built from the Dockerfile and pushed where the cluster
    /// pulls from), e.g. registry.example.com/cn-run:0.1.0.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The Secret holding the API keys (one key per variable name, e.g. OPENAI_API_KEY).
    #[arg(long, default_value = "cn-run", value_name = "NAME")]
    pub secret: String,
    /// Namespace of every object (default: none, i.e. kubectl's current one).
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Prefix of object names.
    #[arg(long, default_value = "cn-run", value_name = "PREFIX")]
    pub name_prefix: String,
    /// Clone this git repository into the workspace before each run (init container).
    #[arg(long, value_name = "URL")]
    pub git_repo: Option<String>,
    /// Branch, tag or commit to clone with --git-repo (shallow; default the remote's HEAD).
    #[arg(long, value_name = "REF", requires = "git_repo")]
    pub git_ref: Option<String>,
    /// A Secret whose key `token` the clone authenticates with.
    #[arg(long, value_name = "NAME", requires = "git_repo")]
    pub git_token_secret: Option<String>,
    /// The run store every run writes its folder to (`--store` of cn-run).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// A Secret whose keys become the pod's environment (the store's credentials where no
    /// workload identity gives them).
    #[arg(long, value_name = "NAME")]
    pub store_secret: Option<String>,
    /// The pod's service account (workload identity: IRSA, GKE, Azure).
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,
    /// Retries of a run that failed in a way worth retrying (exit 5, 6, a killed pod);
    /// exit codes 1-4 are never retried.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub retries: u32,
    /// The container's CPU request.
    #[arg(long, default_value = "500m")]
    pub cpu_request: String,
    /// The container's memory request.
    #[arg(long, default_value = "1Gi")]
    pub memory_request: String,
    /// The container's CPU limit.
    #[arg(long, default_value = "2")]
    pub cpu_limit: String,
    /// The container's memory limit.
    #[arg(long, default_value = "4Gi")]
    pub memory_limit: String,
}

#[derive(Debug, Clone, Args)]
pub struct K8sJobArgs {
    #[command(flatten)]
    pub k8s: K8sExportArgs,
    /// How many runs at once (default 4, at most one per job file).
    #[arg(long, value_name = "N")]
    pub parallelism: Option<u32>,
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
