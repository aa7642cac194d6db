//! Several jobs in one call: `--parallel 3` on one repository, each in its own worktree.
//! Each run sees only its own changes, the user's tree is unchanged, and the combined
//! JUnit report has one suite per job.

use crate::support::runner::{cn_run, git, git_init, run, write_files};

#[test]
fn three_jobs_in_parallel_each_see_only_their_own_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    write_files(&repo, &[("shared.txt", "base\n"), ("README.md", "repo\n")]);
    git_init(&repo);
    std::fs::write(repo.join("README.md"), "the user's uncommitted edit\n").unwrap();
    let jobs = tmp.path().join("jobs");
    for n in 1..=3 {
        let script = format!(
            "turns:\n  - tool_calls: [{{name: Write, arguments: {{filepath: job{n}.txt, content: \"from job {n}\\n\"}}}}]\n  - tool_calls: [{{name: Bash, arguments: {{command: 'sleep 0.3; ls job*.txt | wc -l; cat README.md'}}}}]\n  - text: job {n} done\n"
        );
        let job = format!(
            "version: 1\nname: job{n}\nmodel: {{provider: script, name: m, script: s{n}.yaml}}\nprompt: work\npermissions: {{mode: auto}}\ncheck_placeholder: 0\n"
        )
        .replace("check_placeholder: 0\n", "checks: [{name: own file only, run: 'test $(ls job*.txt | wc -l) -eq 1'}]\n");
        write_files(
            &jobs,
            &[
                (&format!("job{n}.yaml"), &job),
                (&format!("s{n}.yaml"), &script),
            ],
        );
    }
    let mut cmd = cn_run(&repo);
    cmd.args(["--parallel", "3", "--format", "json", "--junit"])
        .arg(tmp.path().join("all.xml"));
    for n in 1..=3 {
        cmd.arg(jobs.join(format!("job{n}.yaml")));
    }
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let summary: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["jobs"], 3);
    for (i, result) in summary["results"].as_array().unwrap().iter().enumerate() {
        assert_eq!(result["job"], format!("job{}", i + 1));
        assert_eq!(result["isolation"], "worktree");
        assert_eq!(result["checks"][0]["passed"], true, "{result}");
        assert_eq!(result["diff"]["files"], 1, "{result}");
        let patch = std::fs::read_to_string(result["patch_path"].as_str().unwrap()).unwrap();
        assert!(patch.contains(&format!("job{}.txt", i + 1)), "{patch}");
    }
    // The user's tree: untouched, no worktree left behind.
    assert_eq!(
        std::fs::read_to_string(repo.join("README.md")).unwrap(),
        "the user's uncommitted edit\n"
    );
    for n in 1..=3 {
        assert!(!repo.join(format!("job{n}.txt")).exists());
    }
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(git(&repo, &["branch", "--list", "cn-run/*"]), "");
    let report = quick_junit::Report::deserialize_from_str(
        &std::fs::read_to_string(tmp.path().join("all.xml")).unwrap(),
    )
    .unwrap();
    assert_eq!(report.test_suites.len(), 3);
}
