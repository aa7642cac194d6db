//! The pod both Kubernetes exports run (`k8s-cronjob`, `k8s-job`), and how cn-run's exit
//! codes become the Job's outcome.
//!
//! The pod passes the Pod Security Standards' *restricted* profile: non-root (uid 10001, the
//! image's user), `seccompProfile: RuntimeDefault`, no privilege escalation, every
//! capability dropped, a read-only root filesystem; what it writes goes to `emptyDir`s: the
//! workspace (`/workspace`), `HOME` and `/tmp`. There bubblewrap cannot make namespaces (no
//! user namespaces under the runtime's seccomp profile, no capabilities), so each run
//! falls back to Landlock and says what is missing (stderr, `sandbox.missing` in
//! result.json); a job with `require_sandbox: true` refuses to run (exit 6).
//!
//! The repository is cloned by an init container: shallow (`git fetch --depth 1`) at a
//! ref (a branch, a tag or a commit), with a token from a Secret handed to git by a
//! credential helper given on the command line, so it is never written into `.git/config`.
//!
//! Exit codes, as `podFailurePolicy` rules (README "Running many jobs"): 1 (the task
//! failed), 2 (the job file is wrong), 3 (approval needed) and 4 (a limit) end the Job (or
//! the index) at once: a retry would cost a whole run again and end the same way (a task
//! the agent can fix on a second try is the job's own `retry:`). 5 (the provider failed
//! after its retries), 6 (the environment) and a killed pod count toward the retries
//! (`--retries`); a pod evicted or preempted (`DisruptionTarget`) does not count.

use serde_json::{Value, json};

use super::{ExportJob, K8sOptions};

/// Where the ConfigMap with the job files is mounted.
pub(super) const JOBS_DIR: &str = "/jobs";
const UID: u32 = 10001;
const HOME: &str = "/home/cn-run";
/// The container's name (the exit-code rules name it).
const CONTAINER: &str = "cn-run";

/// Exit codes that end the Job (or its index) without a retry.
pub(super) const NOT_RETRIED: [i32; 4] = [1, 2, 3, 4];

/// The seconds one run may take in its pod: its time limit, the clone before and the
/// final copies after (5 minutes).
pub(super) fn run_deadline(job: &ExportJob) -> u64 {
    job.timeout_secs() + 300
}

/// The pod failure policy: `fail` is `FailJob` (a CronJob's run) or `FailIndex` (an
/// Indexed Job's job file).
pub(super) fn failure_policy(fail: &str) -> Value {
    json!({
        "rules": [
            {
                "action": fail,
                "onExitCodes": {"containerName": CONTAINER, "operator": "In", "values": NOT_RETRIED},
            },
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        ]
    })
}

/// The pod spec; `run` is the container's command and arguments.
pub(super) fn pod_spec(
    jobs: &[&ExportJob],
    config_map: &str,
    items: &[Value],
    opts: &K8sOptions,
    run: (Vec<String>, Vec<String>),
) -> Value {
    let container = container(jobs, opts, run);
    let mut spec = json!({
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 60,
        "automountServiceAccountToken": false,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": UID,
            "runAsGroup": UID,
            "fsGroup": UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [
            {"name": "jobs", "configMap": {"name": config_map, "items": items}},
            {"name": "workspace", "emptyDir": {}},
            {"name": "home", "emptyDir": {}},
            {"name": "tmp", "emptyDir": {}},
        ],
    });
    if let Some(account) = &opts.service_account {
        // Workload identity for the store (IRSA, GKE, Azure) comes through it.
        spec["serviceAccountName"] = json!(account);
        spec["automountServiceAccountToken"] = json!(true);
    }
    if let Some(repo) = &opts.git_repo {
        spec["initContainers"] = json!([checkout(repo, opts)]);
    }
    spec
}

/// cn-run's container: the job files, workspace, HOME and /tmp mounted, the root
/// read-only, `run` its command and arguments.
fn container(jobs: &[&ExportJob], opts: &K8sOptions, run: (Vec<String>, Vec<String>)) -> Value {
    let mounts = json!([
        {"name": "jobs", "mountPath": JOBS_DIR, "readOnly": true},
        {"name": "workspace", "mountPath": "/workspace"},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]);
    let (command, args) = run;
    let mut container = json!({
        "name": CONTAINER,
        "image": opts.image,
        "args": args,
        "workingDir": "/workspace",
        "env": env(jobs, opts),
        "resources": {
            "requests": {"cpu": opts.cpu_request, "memory": opts.memory_request},
            "limits": {"cpu": opts.cpu_limit, "memory": opts.memory_limit},
        },
        "securityContext": container_security(),
        "volumeMounts": mounts,
    });
    if !command.is_empty() {
        container["command"] = json!(command);
    }
    if let Some(secret) = &opts.store_secret {
        container["envFrom"] = json!([{"secretRef": {"name": secret, "optional": true}}]);
    }
    container
}

/// The shell script of the init container: a shallow fetch of one ref into /workspace.
pub(super) const CHECKOUT: &str = r#"set -eu
cd "$WORKSPACE"
git init -q .
git -c credential.helper='!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=${GIT_TOKEN:-}"; }; f' fetch -q --depth 1 "$GIT_REPO" "$GIT_REF"
git checkout -q --detach FETCH_HEAD
git log -1 --format='checked out %H'"#;

fn checkout(repo: &str, opts: &K8sOptions) -> Value {
    let mut env = vec![
        json!({"name": "GIT_REPO", "value": repo}),
        json!({"name": "GIT_REF", "value": opts.git_ref.as_deref().unwrap_or("HEAD")}),
        json!({"name": "HOME", "value": HOME}),
        json!({"name": "WORKSPACE", "value": "/workspace"}),
    ];
    if let Some(secret) = &opts.git_token_secret {
        env.push(json!({
            "name": "GIT_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": secret, "key": "token"}},
        }));
    }
    json!({
        "name": "checkout",
        "image": opts.image,
        "command": ["/bin/sh", "-c", CHECKOUT],
        "env": env,
        "securityContext": container_security(),
        "volumeMounts": [
            {"name": "workspace", "mountPath": "/workspace"},
            {"name": "home", "mountPath": HOME},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    })
}

fn container_security() -> Value {
    json!({
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "runAsNonRoot": true,
        "runAsUser": UID,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    })
}

/// HOME and TMPDIR on their emptyDirs, the provider keys (and upload URLs) from the
/// Secret.
fn env(jobs: &[&ExportJob], opts: &K8sOptions) -> Vec<Value> {
    let secret = |name: &str, optional: bool| {
        json!({
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": opts.secret, "key": name, "optional": optional}},
        })
    };
    let mut out = vec![
        json!({"name": "HOME", "value": HOME}),
        json!({"name": "TMPDIR", "value": "/tmp"}),
    ];
    let mut names: Vec<(String, bool)> = Vec::new();
    for job in jobs {
        names.extend(job.key_env().map(|k| (k, false)));
        if let Some(u) = &job.job().upload {
            for name in [&u.url_env, &u.diff_url_env].into_iter().flatten() {
                names.push((name.clone(), true));
            }
        }
    }
    for (name, optional) in names {
        if !out.iter().any(|e| e["name"] == name.as_str()) {
            out.push(secret(&name, optional));
        }
    }
    out
}

/// cn-run's own arguments before the job file: JSON on stdout, the store, the parameters.
pub(super) fn cn_run_args(opts: &K8sOptions) -> Vec<String> {
    let mut args: Vec<String> = vec!["--format".to_owned(), "json".to_owned()];
    if let Some(store) = &opts.store {
        args.extend(["--store".to_owned(), store.clone()]);
    }
    for (k, v) in &opts.params {
        args.push("--param".to_owned());
        args.push(format!("{k}={v}"));
    }
    args
}
