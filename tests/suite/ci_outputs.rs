//! CI outputs: JUnit that stays well-formed with ANSI-coloured output and reads back with
//! the structure CI reporters use; GitHub Actions annotations, summary, outputs and masks.

use std::path::Path;

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::support::runner::{Run, cn_run, run, write_files};

fn job(dir: &Path, rest: &str, script: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nname: ci-job\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: do it\n{rest}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", script)]);
    dir.join("job.yaml")
}

fn parse_junit(path: &Path) -> Report {
    let xml = std::fs::read_to_string(path).unwrap();
    // An independent, strict XML parser must accept it too (when python3 is around).
    if let Ok(out) = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(path)
        .output()
    {
        assert!(
            out.status.success(),
            "not well-formed XML: {}\n{xml}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"))
}

#[test]
fn junit_with_ansi_output_is_well_formed_and_structured() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "checks:\n  - {name: lint, run: \"printf '\\\\033[31merror\\\\033[0m: bad \\\\a thing\\\\n'; exit 1\"}\n  - {name: tests, run: 'echo all good'}\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: \"\\e[1mdone\\e[0m\"\n  - text: still done\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j).arg("--junit").arg(tmp.path().join("all.xml"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    for file in [tmp.path().join("out/junit.xml"), tmp.path().join("all.xml")] {
        let report = parse_junit(&file);
        assert_eq!(report.test_suites.len(), 1);
        let suite = &report.test_suites[0];
        assert_eq!(suite.name.as_str(), "ci-job");
        let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "agent run",
                "check: lint (attempt 1)",
                "check: tests (attempt 1)",
                "check: lint (attempt 2)",
                "check: tests (attempt 2)"
            ]
        );
        assert!(matches!(
            suite.test_cases[0].status,
            TestCaseStatus::Success { .. }
        ));
        match &suite.test_cases[1].status {
            TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Failure,
                message,
                ..
            } => {
                assert!(message.as_ref().unwrap().as_str().contains("exit code 1"));
            }
            other => panic!("{other:?}"),
        }
        let props: Vec<(&str, &str)> = suite
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        for key in [
            "run_id",
            "model",
            "cost_usd",
            "input_tokens",
            "output_tokens",
            "attempts",
        ] {
            assert!(
                props.iter().any(|(k, _)| *k == key),
                "missing property {key}: {props:?}"
            );
        }
        assert!(suite.time.is_some());
    }
}

#[test]
fn an_agent_that_hits_a_limit_fails_its_testcase_and_skips_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "limits: {max_turns: 1}\nchecks: [{name: tests, run: 'true'}]\n",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 4);
    let report = parse_junit(&tmp.path().join("out/junit.xml"));
    let cases = &report.test_suites[0].test_cases;
    match &cases[0].status {
        TestCaseStatus::NonSuccess { message, ty, .. } => {
            assert!(message.as_ref().unwrap().as_str().contains("max_turns"));
            assert_eq!(ty.as_ref().unwrap().as_str(), "error_max_turns");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(cases[1].status, TestCaseStatus::Skipped { .. }));
}

fn github_run(dir: &Path, secret: &str) -> Run {
    let j = job(
        dir,
        "permissions: {allow: ['Bash(echo *)']}\nchecks: [{name: unit tests, run: 'echo ok'}]\noutput_schema: {type: object, properties: {summary: {type: string}, fixed: {type: integer}}}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo token=$DEPLOY_TOKEN'}}]\n  - tool_calls: [{name: Bash, arguments: {command: 'curl https://example.invalid'}}]\n  - text: '{\"summary\": \"fixed it\", \"fixed\": 3}'\n",
    );
    let mut cmd = cn_run(dir);
    cmd.arg(&j)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"))
        .env("DEPLOY_TOKEN", secret);
    run(cmd, Some(&dir.join("out")))
}

#[test]
fn github_actions_outputs_summary_annotations_and_masks() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "ghp_plantedSecretValue123";
    let r = github_run(tmp.path(), secret);
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs = std::fs::read_to_string(tmp.path().join("gh_output")).unwrap();
    assert!(outputs.contains("status=success\n"), "{outputs}");
    assert!(outputs.contains("exit-code=0\n"));
    assert!(outputs.contains("output-summary=fixed it\n"), "{outputs}");
    assert!(outputs.contains("output-fixed=3\n"));
    assert!(
        outputs.contains(&format!(
            "result={}",
            tmp.path()
                .join("out/result.json")
                .canonicalize()
                .unwrap()
                .display()
        )),
        "{outputs}"
    );
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    assert!(summary.contains("cn-run `ci-job`: success"), "{summary}");
    assert!(
        summary.contains("| unit tests | 1 | ✅ passed"),
        "{summary}"
    );
    assert!(summary.contains("| denied call |"), "{summary}");
    assert!(
        r.stderr.contains(&format!("::add-mask::{secret}")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("::group::ci-job turn 1") && r.stderr.contains("::endgroup::"));
    assert!(
        r.stderr.contains("::warning title=Bash call denied::"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_planted_secret_is_in_no_file_the_run_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "ghp_plantedSecretValue456";
    let r = github_run(tmp.path(), secret);
    assert_eq!(r.code, 0, "{r:#?}");
    // The command really printed it (to the agent's tool result, before masking)…
    let events = std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap();
    assert!(events.contains("token=[REDACTED]"), "{events}");
    // …and it is nowhere in what the run left behind, nor on stdout.
    assert!(!r.stdout.contains(secret));
    let mut files = vec![tmp.path().join("gh_output"), tmp.path().join("gh_summary")];
    for entry in std::fs::read_dir(tmp.path().join("out")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for f in files.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        assert!(
            !text.contains(secret),
            "{} contains the secret",
            f.display()
        );
    }
    // stderr shows it only inside the mask command GitHub needs to hide it.
    let leaks: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(secret) && !l.starts_with("::add-mask::"))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}");
}

#[test]
fn progress_is_plain_lines_without_a_terminal_a_live_line_with_one_and_nothing_with_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: ok\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("o1")));
    assert!(r.stderr.contains("[ci-job] turn 1: List ."), "{}", r.stderr);
    assert!(
        !r.stderr.contains('\u{1b}'),
        "no terminal codes in a CI log"
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j).arg("--quiet");
    let r = run(cmd, Some(&tmp.path().join("o2")));
    assert_eq!(r.stderr, "", "--quiet silences progress");
    // With a terminal (`script` gives the run one), the live line shows turn and status.
    let Ok(out) = std::process::Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} {} --out {}",
                env!("CARGO_BIN_EXE_cn-run"),
                j.display(),
                tmp.path().join("o3").display()
            ),
            "/dev/null",
        ])
        .current_dir(tmp.path())
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
    else {
        println!("skipped the terminal check: `script` is not installed");
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("ci-job · turn 1"), "{screen}");
    assert!(screen.contains("ci-job · success"), "{screen}");
}
