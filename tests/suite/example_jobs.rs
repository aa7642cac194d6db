//! The example jobs in `jobs/` are valid and pass a dry run: their own policies, limits,
//! checks and output schemas, with the model replaced by their script.

use std::path::Path;

use crate::support::runner::{cn_run, git_init, repo_root, run};

fn copy_demo_repo(dest: &Path) {
    let src = repo_root().join("examples/demo-repo");
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, dest.join(p.file_name().unwrap())).unwrap();
    }
    git_init(dest);
}

fn dry_run(name: &str, params: &[&str]) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    copy_demo_repo(&ws);
    let root = repo_root();
    let mut cmd = cn_run(tmp.path());
    cmd.arg(root.join(format!("jobs/{name}.yaml")))
        .args(["--provider", "script", "--script"])
        .arg(root.join(format!("jobs/scripts/{name}.yaml")))
        .arg("-C")
        .arg(&ws);
    for p in params {
        cmd.args(["--param", p]);
    }
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{name}: {r:#?}");
    assert!(tmp.path().join("out/junit.xml").is_file());
    r.result()
}

#[test]
fn fix_lint_dry_run() {
    let r = dry_run("fix-lint", &["lint_command=true", "test_command=true"]);
    assert_eq!(r["checks"].as_array().unwrap().len(), 2);
}

#[test]
fn update_deps_dry_run_has_structured_output() {
    let r = dry_run("update-deps", &["test_command=true"]);
    assert_eq!(r["structured_output"]["all_tests_pass"], true);
}

#[test]
fn triage_dry_run_is_read_only_and_structured() {
    let r = dry_run("triage-failing-test", &[]);
    assert_eq!(r["structured_output"]["confidence"], "high");
    assert_eq!(r["diff"]["files"], 0, "plan mode changed nothing");
}

#[test]
fn write_changelog_dry_run_writes_the_entry() {
    let r = dry_run("write-changelog", &[]);
    assert_eq!(r["checks"][0]["passed"], true);
    assert_eq!(r["artifacts"][0]["path"], "CHANGELOG.md");
}
