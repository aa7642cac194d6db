//! The GitHub Action with several jobs in one step and with hostile or huge answers: each
//! output written once (aggregate status = the worst, `results` one item per job), a step
//! summary that shows every job, stays under GitHub's size limit (the answer is cut first,
//! never the outcome and checks) and that no model text can break; a build cache keyed on
//! the action's own Cargo.lock.

use std::path::Path;

use super::ci_outputs::{action_yml, parse_github_output};
use crate::support::runner::{cn_run, repo_root, run, write_files};

fn job(dir: &Path, name: &str, rest: &str, answer: &str) {
    let script = format!("turns:\n  - text: {answer:?}\n");
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: {name}.s.yaml}}\nprompt: go\n{rest}"
    );
    write_files(
        dir,
        &[
            (&format!("{name}.yaml"), &job),
            (&format!("{name}.s.yaml"), &script),
        ],
    );
}

/// Runs `jobs` as the action would (GITHUB_ACTIONS=true); returns (exit code, outputs,
/// step summary).
fn actions_run(dir: &Path, jobs: &[&str]) -> (i32, Vec<(String, String)>, String) {
    let mut cmd = cn_run(dir);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"))
        .args(["--parallel", "2", "--isolate", "none", "--out"])
        .arg(dir.join("out"));
    for j in jobs {
        cmd.arg(format!("{j}.yaml"));
    }
    let r = run(cmd, None);
    let outputs = parse_github_output(&std::fs::read_to_string(dir.join("gh_output")).unwrap());
    let summary = std::fs::read_to_string(dir.join("gh_summary")).unwrap_or_default();
    (r.code, outputs, summary)
}

#[test]
fn several_jobs_write_each_output_once_with_the_worst_status_and_every_result() {
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "good", "", "fine");
    job(
        tmp.path(),
        "bad",
        "checks: [{name: c, run: 'exit 1'}]\n",
        "tried",
    );
    job(tmp.path(), "limited", "limits: {max_turns: 1}\n", "never");
    write_files(
        tmp.path(),
        &[(
            "limited.s.yaml",
            "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
        )],
    );
    let (code, outputs, summary) = actions_run(tmp.path(), &["good", "bad", "limited"]);
    let names: Vec<&str> = outputs.iter().map(|(k, _)| k.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        names.len(),
        unique.len(),
        "an output written twice: {names:?}"
    );
    let get = |n: &str| outputs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let worst = get("status").unwrap();
    assert_eq!(get("exit-code").unwrap(), code.to_string());
    let results: serde_json::Value = serde_json::from_str(&get("results").unwrap()).unwrap();
    let per_job: Vec<(String, String, i64)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["job"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["exit_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_job.len(), 3, "{results}");
    assert_eq!(per_job[0], ("good".into(), "success".into(), 0));
    assert_eq!(per_job[1], ("bad".into(), "failed".into(), 1));
    assert_eq!(per_job[2], ("limited".into(), "limit_reached".into(), 4));
    // The worst of the jobs is the step's status and exit code.
    let max = per_job.iter().map(|p| p.2).max().unwrap();
    let worst_job = per_job.iter().find(|p| p.2 == max).unwrap();
    assert_eq!(
        (worst.as_str(), code as i64),
        (worst_job.1.as_str(), max),
        "{per_job:?}"
    );
    for item in results.as_array().unwrap() {
        assert!(
            Path::new(item["result"].as_str().unwrap()).is_file(),
            "{item}"
        );
    }
    // The combined files, and every job in the summary.
    let junit = std::fs::read_to_string(get("junit").unwrap()).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 3, "{junit}");
    assert!(get("result").unwrap().ends_with("summary.json"));
    for name in ["good", "bad", "limited"] {
        assert!(summary.contains(&format!("cn-run `{name}`")), "{summary}");
    }
}

#[test]
fn an_unclosed_fence_or_html_in_the_answer_cannot_swallow_what_follows() {
    for (n, answer) in [
        "```\nunclosed fence",
        "````rust\nfn x() {}\n```",
        "</details>\n# forged heading\n<details>",
        "~~~\ntilde fence",
        "<!-- never closed",
    ]
    .iter()
    .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        job(tmp.path(), "first", "", answer);
        job(tmp.path(), "second", "", "second answer");
        let (code, _, summary) = actions_run(tmp.path(), &["first", "second"]);
        assert_eq!(code, 0, "{summary}");
        // The answer sits inside a fence longer than any backtick run in it, which ends
        // before `</details>`; the next job's section follows intact.
        // Jobs finish in any order: look in the first job's section.
        let section = summary.find("cn-run `first`").unwrap();
        let start = section
            + summary[section..]
                .find("<summary>Final answer</summary>")
                .unwrap();
        let rest = &summary[start..];
        let open = rest.find("\n\n").unwrap() + 2;
        let fence: String = rest[open..].chars().take_while(|c| *c == '`').collect();
        assert!(fence.len() >= 3, "case {n}: {rest}");
        let body_end = rest[open + fence.len()..]
            .find(&format!("\n{fence}\n"))
            .unwrap();
        assert!(rest[open..open + fence.len() + body_end].contains(answer.lines().next().unwrap()));
        let after = &rest[open + fence.len() + body_end..];
        assert!(
            after.starts_with(&format!("\n{fence}\n\n</details>")),
            "case {n}: {after}"
        );
        assert!(
            summary.contains("### ✅ cn-run `second`: success"),
            "case {n}: {summary}"
        );
    }
}

#[test]
fn a_huge_answer_is_cut_and_the_outcome_and_checks_stay_under_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let big = "x".repeat(1_500_000);
    job(
        tmp.path(),
        "huge",
        "checks: [{name: still shown, run: 'echo visible-tail; exit 1'}]\n",
        &big,
    );
    job(tmp.path(), "other", "", "small");
    let (code, _, summary) = actions_run(tmp.path(), &["huge", "other"]);
    assert_eq!(code, 1);
    assert!(summary.len() < 1_000_000, "{} bytes", summary.len());
    assert!(summary.contains("### ❌ cn-run `huge`: failed"));
    assert!(
        summary.contains("| still shown | 1 | ❌ failed (exit 1) |"),
        "checks table"
    );
    assert!(
        summary.contains("visible-tail"),
        "the failed check's output"
    );
    assert!(summary.contains("the whole answer is in result.json"));
    assert!(summary.contains("### ✅ cn-run `other`: success"));
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/huge/result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        result["result"].as_str().unwrap().len(),
        big.len(),
        "result.json keeps it whole"
    );
}

/// The "key" step run as the runner runs it: the key holds the hash of the action's own
/// Cargo.lock (hashFiles cannot see the action's folder) and its ref.
#[test]
fn the_build_cache_key_comes_from_the_actions_own_cargo_lock_and_ref() {
    let action = action_yml();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let key_step = steps.iter().find(|s| s["id"] == "key").expect("a key step");
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .unwrap();
    assert_eq!(cache["with"]["key"], "${{ steps.key.outputs.key }}");
    assert!(!serde_yaml::to_string(cache).unwrap().contains("hashFiles"));
    let tmp = tempfile::tempdir().unwrap();
    let key_for = |action_dir: &Path, reference: &str| -> String {
        let out = tmp.path().join("out");
        let _ = std::fs::remove_file(&out);
        let status = std::process::Command::new("bash")
            .args(["-c", key_step["run"].as_str().unwrap()])
            .env("GITHUB_ACTION_PATH", action_dir)
            .env("GITHUB_ACTION_REF", reference)
            .env("GITHUB_OUTPUT", &out)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .status()
            .unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&out).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("key="))
            .unwrap()
            .to_owned()
    };
    let lock = std::fs::read(repo_root().join("Cargo.lock")).unwrap();
    let digest = sha2_hex(&lock);
    let real = key_for(&repo_root(), "v1");
    assert!(
        real.contains(&digest[..16]) && real.contains("-v1-"),
        "{real}"
    );
    assert_ne!(real, key_for(&repo_root(), "v2"));
    // Another Cargo.lock, another key.
    let copy = tmp.path().join("action");
    write_files(
        &copy,
        &[
            ("Cargo.lock", "other"),
            ("Cargo.toml", ""),
            ("src/lib.rs", ""),
        ],
    );
    assert!(!key_for(&copy, "v1").contains(&digest[..16]));
}

fn sha2_hex(bytes: &[u8]) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}
