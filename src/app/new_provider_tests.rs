//! A new provider family is its description and one row, nothing more: the test-only
//! `probe` family (`provider/family/probe.rs`, a `ProviderKind::Probe` row) is named in
//! job files, checked by `cn-run validate` at the field its row names, picked by `-p
//! --provider probe` with its default model, and runs a job to its end (a model it refuses
//! is a usage error before anything runs) — and no other file of the crate names it.

use std::path::Path;

use crate::cli::Format;
use crate::config::{Call, RunConfig, Settings};
use crate::exit_code::Status;
use crate::job::{self, LoadOptions, ProviderKind};
use crate::observability::LogHandle;
use crate::report::RunResult;
use crate::run::start_error::StartError;
use crate::run::{RunOptions, run_job};

fn load(model: &str) -> job::Job {
    let text =
        format!("name: probed\nprompt: say hi\nmodel:\n  provider: probe\n  name: {model}\n");
    job::load_str(&text, "probed.yaml", None, &LoadOptions::default()).expect("the job loads")
}

#[test]
fn a_job_file_names_the_new_family_and_validate_runs_its_own_check() {
    assert_eq!(load("probe-2").model.provider, ProviderKind::Probe);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("probed.yaml");
    let text = "name: probed\nprompt: hi\nmodel:\n  provider: probe\n  name: gpt-4.1\n";
    std::fs::write(&path, text).expect("written");
    let job = job::load_file(&path, &LoadOptions::default()).expect("the job loads");
    let problems = super::validate::family_problems(&path, &job);
    let [problem] = problems.as_slice() else {
        panic!("one problem: {problems:?}");
    };
    assert_eq!((problem.field.as_str(), problem.line), ("model.name", 5));
    assert!(
        problem.message.contains("no model `gpt-4.1`"),
        "{problem:?}"
    );
    assert!(super::validate::family_problems(&path, &load("probe-2")).is_empty());
}

#[test]
fn dash_p_with_the_new_family_runs_its_default_model() {
    let flags = Settings {
        provider: Some(ProviderKind::Probe),
        ..Settings::default()
    };
    let job = super::adhoc::adhoc_job(&flags, "hello").expect("an ad-hoc job");
    assert_eq!(job.model.provider, ProviderKind::Probe);
    assert_eq!(job.model.name, "probe-1");
}

/// `job` resolved to work in `dir/ws` and write to `dir/out`, as `cn-run -C ws --out out`.
pub(super) fn resolved(dir: &Path, job: job::Job) -> RunConfig {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).expect("a workspace");
    let mut settings = Settings::default();
    settings.policy.workspace = Some(ws);
    let call = Call {
        format: Format::Text,
        out: Some(dir.join("out")),
        jobs_in_call: 1,
        html: Some(false),
        ..Call::default()
    };
    RunConfig::resolve(job, settings, call).expect("resolved")
}

/// The run of `config`, as `cn-run` runs a lone job.
pub(super) fn run(config: RunConfig) -> Result<RunResult, StartError> {
    let log = LogHandle {
        quiet: true,
        ..LogHandle::default()
    };
    let opts = RunOptions {
        early: std::sync::Mutex::default(),
        log: &log,
        worktree: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run_job(config, &opts, None))
}

#[test]
fn a_job_on_the_new_family_runs_to_its_end_and_writes_its_answer() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let result = run(resolved(dir.path(), load("probe-2"))).expect("the run starts");
    assert_eq!(result.status, Status::Success, "{}", result.reason);
    assert_eq!(
        (result.provider.as_str(), result.model.as_str()),
        ("probe", "probe-2")
    );
    assert_eq!(result.result, "probe heard: say hi");
    let on_disk = std::fs::read_to_string(dir.path().join("out/result.json")).expect("written");
    let on_disk: serde_json::Value = serde_json::from_str(&on_disk).expect("JSON");
    assert_eq!(on_disk["result"], "probe heard: say hi");
}

#[test]
fn a_model_the_new_family_refuses_is_a_usage_error_before_anything_runs() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let err = run(resolved(dir.path(), load("gpt-4.1"))).expect_err("refused");
    assert_eq!(err.status, Status::Invalid, "{}", err.message);
    assert!(
        err.message.contains("no model `gpt-4.1`"),
        "{}",
        err.message
    );
    assert!(!dir.path().join("out/result.json").exists());
}
