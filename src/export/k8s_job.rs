//! `cn-run export k8s-job JOB…`: many job files as one Indexed Job — one pod per job file
//! (`completionMode: Indexed`, `completions` = the number of files), `--parallelism` at
//! once — with the ConfigMap that holds them. A pod runs the file of its index
//! (`JOB_COMPLETION_INDEX`, which the Job controller sets), in the pod of `k8s_pod.rs`.
//!
//! Each job file is retried on its own (`backoffLimitPerIndex` = `--retries`), and an exit
//! code that must not be retried fails only its own index (`FailIndex`); the Job fails when
//! any index did, after every index has run. Limits: each pod's `activeDeadlineSeconds` is
//! its job's time limit + 5 min; the Job's covers every wave of pods with their retries.
//! Jobs need no `schedule:` here.

use serde_json::{Value, json};

use super::k8s::{K8sOptions, config_map_doc, file_name, header_comment, metadata, mounted_files};
use super::k8s_pod::{self, JOBS_DIR};
use super::{ExportError, ExportJob, dns_label, yaml_stream};

/// Runs at once when `--parallelism` is not given.
const DEFAULT_PARALLELISM: u32 = 4;

/// The ConfigMap and the Indexed Job, as one YAML stream.
pub fn k8s_job(jobs: &[ExportJob], opts: &K8sOptions) -> Result<String, ExportError> {
    let prefix = dns_label(&opts.name_prefix, 30);
    let config_map = format!("{prefix}-jobs");
    let (files, _) = mounted_files(jobs)?;
    let items: Vec<Value> = files
        .iter()
        .map(|f| json!({"key": f.key, "path": f.path}))
        .collect();
    let count = u32::try_from(jobs.len()).unwrap_or(u32::MAX);
    let parallelism = opts
        .parallelism
        .unwrap_or(DEFAULT_PARALLELISM)
        .clamp(1, count.max(1));
    let all: Vec<&ExportJob> = jobs.iter().collect();
    let mut spec = k8s_pod::pod_spec(&all, &config_map, &items, opts, command(jobs, opts));
    let longest = jobs.iter().map(k8s_pod::run_deadline).max().unwrap_or(3600);
    spec["activeDeadlineSeconds"] = json!(longest);
    let waves = u64::from(count.div_ceil(parallelism));
    let name = format!("{prefix}-fleet");
    let meta = metadata(&name, opts, None);
    let labels = meta["labels"].clone();
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "completionMode": "Indexed",
            "completions": count,
            "parallelism": parallelism,
            "backoffLimitPerIndex": opts.retries,
            "activeDeadlineSeconds": longest * waves * u64::from(opts.retries + 1),
            "podFailurePolicy": k8s_pod::failure_policy("FailIndex"),
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    });
    let list: Vec<&str> = jobs.iter().map(|j| j.path.as_str()).collect();
    let mut comment = header_comment("k8s-job", &list, opts);
    for (i, j) in jobs.iter().enumerate() {
        comment.push_str(&format!("\nindex {i}: {}", j.path));
    }
    Ok(yaml_stream(
        &comment,
        &[config_map_doc(&config_map, &files, opts), job],
    ))
}

/// `sh -c` picks the file of the pod's index from the list and runs cn-run on it.
fn command(jobs: &[ExportJob], opts: &K8sOptions) -> (Vec<String>, Vec<String>) {
    let mut words = vec!["cn-run".to_owned()];
    words.extend(k8s_pod::cn_run_args(opts));
    let script = format!(
        "shift \"$JOB_COMPLETION_INDEX\" && exec {} \"$1\"",
        shell_words::join(&words)
    );
    let mut args = vec![script, "cn-run-fleet".to_owned()];
    args.extend(
        jobs.iter()
            .map(|j| format!("{JOBS_DIR}/{}", file_name(&j.path))),
    );
    (vec!["/bin/sh".to_owned(), "-c".to_owned()], args)
}
