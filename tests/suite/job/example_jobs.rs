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

/// The dry-run command a job's header gives, joined from its comment lines.
fn header_dry_run(job: &str) -> String {
    let mut command = String::new();
    let mut lines = job.lines().skip_while(|l| !l.starts_with("# Dry run"));
    lines.next().expect("a `# Dry run` line in the header");
    for line in lines {
        let Some(text) = line.strip_prefix("#   ") else {
            break;
        };
        match text.strip_suffix('\\') {
            Some(part) => command.push_str(part),
            None => command.push_str(text),
        }
    }
    command
}

/// Each example's dry run, as its header writes it, run from (a copy of) the repository's
/// root with `cn-run` on PATH: it passes, works on a scratch copy of the demo project, and
/// leaves the checkout as it was (no CHANGELOG.md at its root, the demo unchanged).
#[test]
fn every_examples_header_dry_run_passes_and_leaves_the_checkout_alone() {
    let bin = Path::new(env!("CARGO_BIN_EXE_cn-run")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let root = repo_root();
    for name in [
        "fix-lint",
        "triage-failing-test",
        "update-deps",
        "write-changelog",
    ] {
        let checkout = tempfile::tempdir().unwrap();
        let co = checkout.path();
        for dir in ["jobs", "examples"] {
            let status = std::process::Command::new("cp")
                .arg("-r")
                .arg(root.join(dir))
                .arg(co)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let scratch = tempfile::tempdir().unwrap();
        let job = std::fs::read_to_string(co.join(format!("jobs/{name}.yaml"))).unwrap();
        let command = header_dry_run(&job);
        assert!(
            command.contains(&format!("cn-run jobs/{name}.yaml")),
            "{command}"
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("{command} --format json --quiet")])
            .current_dir(co)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", co)
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {command}\n{stderr}");
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let workspace = result["workspace"].as_str().unwrap();
        assert!(
            Path::new(workspace).starts_with(scratch.path().canonicalize().unwrap()),
            "{name} ran in {workspace}"
        );
        assert!(
            !co.join("CHANGELOG.md").exists(),
            "{name} wrote into the checkout"
        );
        let demo = |dir: &Path| {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            files.sort();
            files
        };
        assert_eq!(
            demo(&co.join("examples/demo-repo")),
            demo(&root.join("examples/demo-repo")),
            "{name} changed the demo project"
        );
        if name == "triage-failing-test" {
            assert_eq!(
                result["structured_output"]["test"], "multiply 4 5",
                "{result}"
            );
        }
    }
}
