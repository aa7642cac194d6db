//! `cn-run report RUN`: the outputs of a run folder rebuilt from its events.jsonl. For
//! runs of many shapes (passing, failed checks, a limit, a denied call, parallel jobs,
//! resumed, untrusted, artifacts + structured output + a diff), result.json and junit.xml
//! are deleted and `cn-run report` writes them back byte for byte; a run that was killed
//! before it wrote them gets a result that says so.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::outputs_replay::assert_replays;
use crate::support::runner::{
    Run, cn_run, git_init, run, run_parallel_jobs, run_scripted, write_files,
};

const MODEL: &str = "model: {provider: script, name: m, script: s.yaml}\n";

/// Runs `job_rest` with `script` in `dir` (a git repository) and `extra` flags.
fn run_job(dir: &Path, job_rest: &str, script: &str, extra: &[&str]) -> Run {
    run_scripted(dir, "shape", "do it", job_rest, script, extra)
}

/// Deletes result.json and junit.xml of `folder`, runs `cn-run report`, and checks the
/// files come back as they were (and result.json is printed on stdout).
fn delete_and_report(folder: &Path) -> Value {
    let result = std::fs::read_to_string(folder.join("result.json")).unwrap();
    let junit = std::fs::read_to_string(folder.join("junit.xml")).unwrap();
    std::fs::remove_file(folder.join("result.json")).unwrap();
    std::fs::remove_file(folder.join("junit.xml")).unwrap();
    let mut cmd = cn_run(folder);
    cmd.arg("report").arg(folder);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    pretty_assertions::assert_eq!(
        std::fs::read_to_string(folder.join("result.json")).unwrap(),
        result
    );
    pretty_assertions::assert_eq!(
        std::fs::read_to_string(folder.join("junit.xml")).unwrap(),
        junit
    );
    assert_eq!(r.stdout, result, "stdout carries the rebuilt result.json");
    serde_json::from_str(&result).unwrap()
}

fn out(dir: &Path) -> PathBuf {
    dir.join("out")
}

#[test]
fn a_passing_run_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(tmp.path(), "", "turns:\n  - text: all good\n", &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    assert_eq!(
        (result["status"].as_str(), result["result"].as_str()),
        (Some("success"), Some("all good"))
    );
}

#[test]
fn a_run_whose_checks_fail_is_rebuilt_with_every_attempt() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "checks: [{name: never, run: 'echo nope; exit 3'}, {name: fine, run: 'true'}]\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: done\n  - text: still done\n",
        &[],
    );
    assert_eq!(r.code, 1, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    assert_eq!(result["attempts"], 2);
    assert_eq!(result["checks"].as_array().unwrap().len(), 4);
    assert_eq!(
        result["checks_declared"],
        serde_json::json!(["never", "fine"])
    );
}

#[test]
fn a_run_stopped_by_a_limit_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "limits: {max_turns: 1}\nchecks: [{name: tests, run: 'true'}]\npermissions: {allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo one'}}]\n  - text: never\n",
        &[],
    );
    assert_eq!(r.code, 4, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    assert_eq!(result["subtype"], "error_max_turns");
    let junit = std::fs::read_to_string(out(tmp.path()).join("junit.xml")).unwrap();
    assert!(
        junit.contains("not run: the agent did not finish"),
        "{junit}"
    );
}

#[test]
fn a_run_with_denied_calls_is_rebuilt_with_its_denials() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "permissions: {exclude: ['Bash(rm *)'], allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, id: x, arguments: {command: 'rm -rf a.txt'}}]\n  - tool_calls: [{name: Bash, id: y, arguments: {command: 'echo hi'}}]\n  - text: gave up on rm\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_use_id"], "x");
    assert_eq!(result["num_tool_calls"], 1);
}

#[test]
fn an_untrusted_run_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "",
        "turns:\n  - tool_calls: [{name: Read, arguments: {filepath: a.txt}}]\n  - text: read it\n",
        &["--untrusted"],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    assert_eq!(result["result"], "read it");
}

#[test]
fn a_run_with_artifacts_structured_output_and_a_diff_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "artifacts: [\"notes/*.txt\"]\noutput_schema: {type: object, properties: {fixed: {type: integer}}}\npermissions: {mode: auto}\n",
        "turns:\n  - tool_calls: [{name: Write, arguments: {filepath: notes/n.txt, content: \"note\\n\"}}]\n  - text: '{\"fixed\": 2}'\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let result = delete_and_report(&out(tmp.path()));
    assert_eq!(result["structured_output"]["fixed"], 2);
    assert_eq!(result["artifacts"][0]["path"], "notes/n.txt");
    assert_eq!(result["diff"]["files"], 1, "{result}");
    assert!(!result["checkpoints"].as_array().unwrap().is_empty());
}

#[test]
fn each_job_of_a_parallel_call_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let folders = run_parallel_jobs(tmp.path(), 3);
    for f in &folders {
        delete_and_report(f);
    }
}

#[test]
fn a_resumed_run_is_rebuilt_from_both_runs_events() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let r = run_job(
        dir,
        "",
        "turns:\n  - text: first answer\n  - text: second answer\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let mut cmd = cn_run(dir);
    cmd.args(["--resume"])
        .arg(out(dir))
        .args(["-p", "and now?"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result = delete_and_report(&out(dir));
    assert_eq!(result["result"], "second answer");
    let events = std::fs::read_to_string(out(dir).join("events.jsonl")).unwrap();
    assert_eq!(events.matches("\"type\":\"run.completed\"").count(), 2);
}

#[test]
fn a_run_killed_before_its_end_gets_a_result_that_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "permissions: {allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo one'}}]\n  - tool_calls: [{name: Bash, arguments: {command: 'echo two'}}]\n  - text: done\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let folder = out(tmp.path());
    // What a kill leaves: the events up to the second turn, the last line cut short.
    let events = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    let cut = events.find("\"type\":\"turn.started\",\"turn\":3").unwrap();
    let line_start = events[..cut].rfind('\n').unwrap() + 1;
    std::fs::write(folder.join("events.jsonl"), &events[..line_start + 40]).unwrap();
    std::fs::remove_file(folder.join("result.json")).unwrap();
    std::fs::remove_file(folder.join("junit.xml")).unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.arg("report").arg(&folder);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(result["status"], "internal_error");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("did not finish"),
        "{result}"
    );
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["num_tool_calls"], 2);
    assert_eq!(result["job"], "shape");
    assert!(folder.join("junit.xml").is_file());
}

#[test]
fn report_of_a_folder_without_events_is_a_usage_error_and_a_bad_line_is_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.args(["report", "no-such-run"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr.contains("no events.jsonl in `no-such-run`"),
        "{}",
        r.stderr
    );
    // A line that is not an event is skipped and named by its number; the rest folds.
    write_files(
        tmp.path(),
        &[(
            "bad/events.jsonl",
            "{\"schema_version\":1,\"seq\":1,\"ts\":\"t\",\"run_id\":\"r\",\"type\":\"warning\",\"message\":\"m\"}\nnot json\n{}\n",
        )],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["report", "bad"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr.contains("events.jsonl:2:") && r.stderr.contains("events.jsonl:3:"),
        "{}",
        r.stderr
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("bad/result.json")).unwrap())
            .unwrap();
    assert_eq!(result["warnings"][0], "m");
}

#[test]
fn report_github_writes_the_summary_and_outputs_the_run_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = format!(
        "version: 1\nname: gh\n{MODEL}prompt: p\npermissions: {{mode: auto}}\nchecks: [{{name: unit, run: 'exit 1'}}]\n"
    );
    write_files(
        dir,
        &[
            ("job.yaml", &job),
            (
                "s.yaml",
                "turns:\n  - tool_calls: [{name: Write, arguments: {filepath: b.txt, content: \"b\\n\"}}]\n  - text: wrote b\n",
            ),
        ],
    );
    git_init(dir);
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml");
    github_env(&mut cmd, dir, "run");
    let r = run(cmd, Some(&out(dir)));
    assert_eq!(r.code, 1, "{r:#?}");
    let mut cmd = cn_run(dir);
    cmd.arg("report").arg(out(dir)).arg("--github");
    github_env(&mut cmd, dir, "report");
    let rebuilt = run(cmd, None);
    assert_eq!(rebuilt.code, 0, "{rebuilt:#?}");
    // Multi-line outputs use a random heredoc delimiter each time.
    let delim = regex::Regex::new("CN_RUN_EOF_[0-9a-f]{32}").unwrap();
    for name in ["summary", "output"] {
        let ext = if name == "summary" { "md" } else { "txt" };
        let read = |tag: &str| {
            let text = std::fs::read_to_string(dir.join(format!("{name}-{tag}.{ext}"))).unwrap();
            delim.replace_all(&text, "CN_RUN_EOF").into_owned()
        };
        let (a, b) = (read("run"), read("report"));
        assert!(a.contains("unit"), "{a}");
        pretty_assertions::assert_eq!(a, b, "{name}");
    }
    assert!(rebuilt.stderr.contains("::error"), "{}", rebuilt.stderr);
    // Without the variables, --github is refused rather than silently skipped.
    let mut cmd = cn_run(dir);
    cmd.arg("report").arg(out(dir)).arg("--github");
    assert_eq!(run(cmd, None).code, 2);
}

#[test]
fn the_replay_check_catches_a_result_that_is_not_the_fold_of_its_events() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(tmp.path(), "", "turns:\n  - text: all good\n", &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(assert_replays(&out(tmp.path())), 1);
    let path = out(tmp.path()).join("result.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"num_tool_calls\": 0", "\"num_tool_calls\": 1"),
    )
    .unwrap();
    let caught = std::panic::catch_unwind(|| assert_replays(&out(tmp.path())));
    assert!(
        caught.is_err(),
        "a patched result.json must fail the replay check"
    );
}

/// The step summary's changed-file rows come from the `changes.recorded` event: they match
/// what git reads from diff.patch (`git apply --numstat`), and `cn-run report --github`
/// writes the same summary after diff.patch is deleted (it read the patch before).
#[test]
fn the_changed_files_of_the_step_summary_come_from_the_events() {
    let w = |path: &str, content: &str| {
        format!(
            "  - tool_calls: [{{name: Write, arguments: {{filepath: \"{path}\", content: \"{content}\"}}}}]\n"
        )
    };
    let bash = |command: &str| {
        format!("  - tool_calls: [{{name: Bash, arguments: {{command: \"{command}\"}}}}]\n")
    };
    let many: String = (0..35)
        .map(|i| w(&format!("many/f{i:02}.txt"), "x\\n"))
        .collect();
    let scenarios: [(&str, String); 5] = [
        ("modified", w("keep.txt", "one\\nTWO\\nthree\\nfour\\n")),
        (
            "added, odd names",
            w("dir/a b.txt", "hi\\n") + &w("caf\u{e9}.txt", "x\\ny\\n"),
        ),
        ("deleted", bash("rm gone.txt")),
        ("binary", bash("printf 'a\\\\000b' > blob.bin")),
        (
            "mixed, over thirty",
            many + &w("keep.txt", "one\\n") + &bash("rm gone.txt"),
        ),
    ];
    for (what, turns) in scenarios {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let job = format!(
            "version: 1\nname: files\n{MODEL}prompt: p\npermissions: {{mode: auto, allow: ['Bash(rm gone.txt)', 'Bash(printf *)']}}\n"
        );
        let script = format!("turns:\n{turns}  - text: done\n");
        write_files(
            dir,
            &[
                ("job.yaml", &job),
                ("s.yaml", &script),
                ("keep.txt", "one\ntwo\nthree\n"),
                ("gone.txt", "a\nb\n"),
            ],
        );
        git_init(dir);
        let mut cmd = cn_run(dir);
        cmd.arg("job.yaml");
        github_env(&mut cmd, dir, "run");
        let r = run(cmd, Some(&out(dir)));
        assert_eq!(r.code, 0, "{what}: {r:#?}");
        let summary = std::fs::read_to_string(dir.join("summary-run.md")).unwrap();
        let numstat = crate::support::runner::git(
            dir,
            &[
                "apply",
                "--numstat",
                "-z",
                out(dir).join("diff.patch").to_str().unwrap(),
            ],
        );
        let rows: Vec<&str> = numstat.split('\0').filter(|r| !r.is_empty()).collect();
        assert!(!rows.is_empty(), "{what}: a diff");
        for row in rows.iter().take(30) {
            let mut parts = row.splitn(3, '\t');
            let (ins, del, path) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            let (ins, del) = if ins == "-" {
                ("binary", "binary")
            } else {
                (ins, del)
            };
            let listed = summary.lines().any(|l| {
                l.starts_with(&format!("| `{path}`")) && l.ends_with(&format!(" | {ins} | {del} |"))
            });
            assert!(listed, "{what}: {path} +{ins} -{del} listed:\n{summary}");
        }
        if rows.len() > 30 {
            let more = format!("… and {} more (see the patch).", rows.len() - 30);
            assert!(summary.contains(&more), "{what}: {summary}");
        }
        std::fs::remove_file(out(dir).join("diff.patch")).unwrap();
        let mut cmd = cn_run(dir);
        cmd.arg("report").arg(out(dir)).arg("--github");
        github_env(&mut cmd, dir, "report");
        assert_eq!(run(cmd, None).code, 0, "{what}");
        let rebuilt = std::fs::read_to_string(dir.join("summary-report.md")).unwrap();
        pretty_assertions::assert_eq!(summary, rebuilt, "{what}");
    }
}

/// `cmd` as a GitHub Actions step whose summary and outputs go to files in `dir` named by
/// `tag`.
fn github_env(cmd: &mut std::process::Command, dir: &Path, tag: &str) {
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join(format!("summary-{tag}.md")))
        .env("GITHUB_OUTPUT", dir.join(format!("output-{tag}.txt")));
}
