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

fn simple_job(dir: &std::path::Path, file: &str, name: &str, rest: &str, answer: &str) {
    let script = format!("turns:\n  - text: {answer}\n");
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: {file}.s.yaml}}\nprompt: work\n{rest}"
    );
    write_files(
        dir,
        &[
            (&format!("{file}.yaml"), &job),
            (&format!("{file}.s.yaml"), &script),
        ],
    );
}

/// `--parallel N --out DIR`: a folder per job (same names made unique), each with its own
/// result, events, session and junit; the combined junit.xml and summary.json at the top.
#[test]
fn parallel_jobs_with_out_each_get_a_folder_and_a_combined_report() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    simple_job(ws, "a", "same", "", "a done");
    simple_job(ws, "b", "same", "", "b done");
    simple_job(
        ws,
        "c",
        "bad check",
        "checks: [{name: c, run: 'exit 1'}]\n",
        "c done",
    );
    let out = ws.join("out");
    let mut cmd = cn_run(ws);
    cmd.args(["--parallel", "2", "--isolate", "none", "--format", "json"])
        .args(["a.yaml", "b.yaml", "c.yaml", "--out"])
        .arg(&out);
    let r = run(cmd, None);
    assert_eq!(r.code, 1, "{r:#?}");
    for (folder, job, answer) in [
        ("same", "same", "a done"),
        ("same-2", "same", "b done"),
        ("bad_check", "bad check", "c done"),
    ] {
        let dir = out.join(folder);
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(result["job"], job);
        assert_eq!(result["result"], answer, "{folder}");
        assert_eq!(
            result["output_dir"],
            dir.canonicalize().unwrap().to_str().unwrap()
        );
        let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
        assert!(!events.contains('\0'), "{folder}: NUL in events");
        let seqs: Vec<u64> = events
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{folder}: {seqs:?}");
        assert_eq!(events.matches("\"run.completed\"").count(), 1, "{folder}");
        assert!(dir.join("session.jsonl").is_file() && dir.join("junit.xml").is_file());
    }
    let top = super::junit_shape::assert_junit_10(
        &std::fs::read_to_string(out.join("junit.xml")).unwrap(),
    );
    for answer in ["a done", "b done", "c done"] {
        assert!(top.contains(answer), "{top}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    assert_eq!(summary["exit_code"], r.code);
    assert_eq!(summary["jobs"], 3);
    let printed: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(printed["exit_code"], r.code);
}

/// A job that cannot start (its worktree needs a git repository) makes the call exit 2,
/// and the summary says so too, while the other job's result stays.
#[test]
fn a_job_that_cannot_start_sets_the_summary_status_and_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    simple_job(
        ws,
        "a",
        "copied",
        "workspace: {path: ., copy: true}\n",
        "fine",
    );
    simple_job(ws, "b", "needs-git", "", "never");
    let out = ws.join("out");
    let mut cmd = cn_run(ws);
    cmd.args([
        "--parallel",
        "2",
        "--format",
        "json",
        "a.yaml",
        "b.yaml",
        "--out",
    ])
    .arg(&out);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    let printed: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for summary in [printed, written] {
        assert_eq!(summary["status"], "invalid", "{summary}");
        assert_eq!(summary["exit_code"], 2);
        assert_eq!(summary["jobs"], 2);
        assert_eq!(summary["results"][0]["result"], "fine");
        assert!(
            summary["errors"][0].as_str().unwrap().contains("needs-git"),
            "{summary}"
        );
    }
}

/// A run folder that cannot be made (under a file) or written (owned by another user, as
/// a checkout mounted into the image can be) is an environment error, exit 6, said in words.
#[test]
fn a_run_folder_that_cannot_be_written_is_exit_6_in_words() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::set_permissions(ws, std::fs::Permissions::from_mode(0o755)).unwrap();
    simple_job(ws, "a", "job", "", "fine");
    std::fs::write(ws.join("a-file"), "").unwrap();
    let mut cmd = cn_run(ws);
    cmd.args(["a.yaml", "--out", "a-file/out"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 6, "{r:#?}");
    assert!(
        r.stderr.contains("cannot write the run folder"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("give --out a folder that can be created"),
        "{}",
        r.stderr
    );

    // Not writable by this user: a folder only its owner may write.
    let locked = ws.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = cn_run(ws);
    if rustix::process::geteuid().is_root() {
        // root writes anywhere: run as nobody, as a container user unlike the owner.
        std::os::unix::process::CommandExt::uid(&mut cmd, 65534);
        std::os::unix::process::CommandExt::gid(&mut cmd, 65534);
    }
    cmd.args(["a.yaml", "--out", "locked/out"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 6, "{r:#?}");
    assert!(r.stderr.contains("may not write it"), "{}", r.stderr);
    assert!(
        r.stderr.contains("--user \"$(id -u):$(id -g)\""),
        "{}",
        r.stderr
    );
    assert!(!locked.join("out").exists());
}
