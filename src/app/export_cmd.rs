//! `cn-run export github-workflow|k8s-cronjob|k8s-job JOB…`: load the jobs, build the
//! file, write it to stdout or `-o FILE`. For the scheduled targets a job without a
//! `schedule:` is skipped with a note (so `export … jobs/*.yaml` works on a folder of mixed
//! jobs); `k8s-job` and `github-workflow --matrix` take every job; any other problem (a time zone
//! GitHub cannot express, unsupported cron syntax, no scheduled job at all) is a usage
//! error: exit 2, nothing written.

use crate::cli::{ExportArgs, ExportCommon, ExportTarget, K8sExportArgs};
use crate::export::{self, ExportError, ExportJob, GithubOptions, K8sOptions};

use super::console::{stdout, usage_error};

pub(crate) fn run(args: &ExportArgs) -> i32 {
    let (common, built) = match &args.target {
        ExportTarget::GithubWorkflow(a) => {
            let opts = GithubOptions {
                name: a.name.clone(),
                action: a.action.clone(),
                runs_on: a.runs_on.clone(),
                params: a.common.params.clone(),
                cron: a.cron.clone(),
                max_parallel: a.max_parallel,
                store: a.common.store.clone(),
            };
            let built = if a.matrix {
                load_all(&a.common).and_then(|jobs| Ok(export::github_matrix(&jobs, &opts)?))
            } else {
                load(&a.common).and_then(|jobs| Ok(export::github_workflow(&jobs, &opts)?))
            };
            (&a.common, built)
        }
        ExportTarget::K8sCronjob(a) => (
            &a.common,
            load(&a.common).and_then(|jobs| Ok(export::k8s_cronjob(&jobs, &k8s_options(a, None))?)),
        ),
        ExportTarget::K8sJob(a) => (
            &a.k8s.common,
            load_all(&a.k8s.common)
                .and_then(|jobs| Ok(export::k8s_job(&jobs, &k8s_options(&a.k8s, a.parallelism))?)),
        ),
    };
    let text = match built {
        Ok(t) => t,
        Err(e) => return usage_error(&e.to_string()),
    };
    match &common.output {
        None => {
            stdout(&text);
            0
        }
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                let _ = std::fs::create_dir_all(dir);
            }
            match crate::out_file::write_whole(path, &[text.as_bytes()]) {
                Ok(()) => 0,
                Err(e) => {
                    let _ = usage_error(&format!("cannot write {}: {e}", path.display()));
                    crate::exit_code::Status::InternalError.exit_code()
                }
            }
        }
    }
}

fn k8s_options(a: &K8sExportArgs, parallelism: Option<u32>) -> K8sOptions {
    K8sOptions {
        image: a.image.clone(),
        secret: a.secret.clone(),
        namespace: a.namespace.clone(),
        name_prefix: a.name_prefix.clone(),
        git_repo: a.git_repo.clone(),
        git_ref: a.git_ref.clone(),
        git_token_secret: a.git_token_secret.clone(),
        store: a.common.store.clone(),
        store_secret: a.store_secret.clone(),
        service_account: a.service_account.clone(),
        retries: a.retries,
        parallelism,
        cpu_request: a.cpu_request.clone(),
        memory_request: a.memory_request.clone(),
        cpu_limit: a.cpu_limit.clone(),
        memory_limit: a.memory_limit.clone(),
        params: a.common.params.clone(),
    }
}

/// Why there is nothing to export (exit 2).
#[derive(Debug, thiserror::Error)]
enum LoadError {
    /// The jobs load but cannot be exported together.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// Every job that cannot be loaded, one per line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Jobs(Vec<ExportError>),
    #[error("none of the {0} job(s) has a `schedule:`; add one (e.g. schedule: \"0 3 * * 1\")")]
    NoneScheduled(usize),
}

fn load(common: &ExportCommon) -> Result<Vec<ExportJob>, LoadError> {
    let mut jobs = load_all(common)?;
    let given = jobs.len();
    jobs.retain(|j| {
        let scheduled = j.job().schedule.is_some();
        if !scheduled {
            tracing::warn!(
                "note: {}: job `{}` has no `schedule:`; skipped (add one to export it)",
                j.path,
                j.job().name
            );
        }
        scheduled
    });
    if jobs.is_empty() {
        Err(LoadError::NoneScheduled(given))
    } else {
        Ok(jobs)
    }
}

/// Every job given, scheduled or not (a matrix, an Indexed Job).
fn load_all(common: &ExportCommon) -> Result<Vec<ExportJob>, LoadError> {
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for path in &common.jobs {
        match ExportJob::load(path, &common.params) {
            Ok(j) => jobs.push(j),
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(LoadError::Jobs(problems));
    }
    Ok(jobs)
}
