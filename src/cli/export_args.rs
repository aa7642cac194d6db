//! The flags of `cn-run export`: a GitHub workflow, Kubernetes CronJobs or one Kubernetes
//! Indexed Job made from job files.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::parse_param;

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
    /// The run store each run writes its folder to (`--store` of cn-run).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
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
