//! `cn-run export github-workflow|k8s-cronjob JOB…`: load the jobs, build the file, write it
//! to stdout or `-o FILE`. A job without a `schedule:` is skipped with a note (so
//! `export … jobs/*.yaml` works on a folder of mixed jobs); any other problem (a time zone
//! GitHub cannot express, unsupported cron syntax, no scheduled job at all) is a usage
//! error: exit 2, nothing written.

use crate::cli::{ExportArgs, ExportCommon, ExportTarget};
use crate::export::{self, ExportJob, GithubOptions, K8sOptions};

use super::{stdout, usage_error};

pub(crate) fn run(args: &ExportArgs) -> i32 {
    let (common, built) = match &args.target {
        ExportTarget::GithubWorkflow(a) => {
            let opts = GithubOptions {
                name: a.name.clone(),
                action: a.action.clone(),
                runs_on: a.runs_on.clone(),
                params: a.common.params.clone(),
            };
            (
                &a.common,
                load(&a.common).and_then(|jobs| {
                    export::github_workflow(&jobs, &opts).map_err(|e| e.to_string())
                }),
            )
        }
        ExportTarget::K8sCronjob(a) => {
            let opts = K8sOptions {
                image: a.image.clone(),
                secret: a.secret.clone(),
                namespace: a.namespace.clone(),
                name_prefix: a.name_prefix.clone(),
                git_repo: a.git_repo.clone(),
                git_ref: a.git_ref.clone(),
                cpu_request: a.cpu_request.clone(),
                memory_request: a.memory_request.clone(),
                cpu_limit: a.cpu_limit.clone(),
                memory_limit: a.memory_limit.clone(),
                params: a.common.params.clone(),
            };
            (
                &a.common,
                load(&a.common)
                    .and_then(|jobs| export::k8s_cronjob(&jobs, &opts).map_err(|e| e.to_string())),
            )
        }
    };
    let text = match built {
        Ok(t) => t,
        Err(e) => return usage_error(&e),
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
            match std::fs::write(path, text) {
                Ok(()) => 0,
                Err(e) => usage_error(&format!("cannot write {}: {e}", path.display())),
            }
        }
    }
}

fn load(common: &ExportCommon) -> Result<Vec<ExportJob>, String> {
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for path in &common.jobs {
        match ExportJob::load(path, &common.params) {
            Ok(j) => jobs.push(j),
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
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
        Err(format!(
            "none of the {given} job(s) has a `schedule:`; add one (e.g. schedule: \"0 3 * * 1\")"
        ))
    } else {
        Ok(jobs)
    }
}
