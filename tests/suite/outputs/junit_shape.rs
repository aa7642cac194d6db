//! junit.xml as its strictest readers see it: a strict XML 1.0 parser (roxmltree), and the
//! element and attribute rules of Jenkins' xunit `junit-10.xsd` (MIT, Gregory Boissinot;
//! the copy pytest ships in its sdist as testing/example_scripts/junit-10.xsd, which
//! `.ci/consumers` validates against with lxml). Passing, failing, limit, parallel and
//! hostile-output runs; the hostile text stays readable after each escape sequence.

use std::path::{Path, PathBuf};

use crate::support::runner::{cn_run, run, write_files};

/// Allowed attributes and children of each junit-10.xsd element (required attributes
/// first, their count second).
fn rules(element: &str) -> Option<(&'static [&'static str], usize, &'static [&'static str])> {
    const STATUS: &[&str] = &["type", "message"];
    Some(match element {
        "testsuites" => (
            &["name", "time", "tests", "failures", "errors"],
            0,
            &["testsuite"],
        ),
        "testsuite" => (
            &[
                "name",
                "tests",
                "failures",
                "errors",
                "group",
                "time",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
                "file",
                "log",
                "url",
                "version",
            ],
            4,
            &[
                "testsuite",
                "properties",
                "testcase",
                "system-out",
                "system-err",
            ],
        ),
        "properties" => (&[], 0, &["property"]),
        "property" => (&["name", "value"], 2, &[]),
        "testcase" => (
            &["name", "time", "classname", "group"],
            1,
            &[
                "skipped",
                "error",
                "failure",
                "rerunFailure",
                "rerunError",
                "flakyFailure",
                "flakyError",
                "system-out",
                "system-err",
            ],
        ),
        "failure" | "error" | "skipped" => (STATUS, 0, &[]),
        // rerunType: `type` is required, the children come in this order.
        "rerunFailure" | "rerunError" | "flakyFailure" | "flakyError" => (
            &["type", "message"],
            1,
            &["stackTrace", "system-out", "system-err"],
        ),
        "system-out" | "system-err" | "stackTrace" => (&[], 0, &[]),
        _ => return None,
    })
}

/// SUREFIRE_TIME: digits (optionally grouped by commas) and at most three decimals.
fn is_surefire_time(t: &str) -> bool {
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    frac.len() <= 3
        && frac.chars().all(|c| c.is_ascii_digit())
        && int.chars().all(|c| c.is_ascii_digit() || c == ',')
}

fn check_element(node: roxmltree::Node<'_, '_>) {
    let name = node.tag_name().name();
    let (attrs, required, children) =
        rules(name).unwrap_or_else(|| panic!("<{name}> is not in junit-10.xsd"));
    for a in node.attributes() {
        assert!(
            attrs.contains(&a.name()),
            "<{name} {}> is not allowed",
            a.name()
        );
        if a.name() == "time" {
            assert!(is_surefire_time(a.value()), "<{name} time={:?}>", a.value());
        }
    }
    for req in &attrs[..required] {
        assert!(node.attribute(*req).is_some(), "<{name}> lacks {req}");
    }
    for child in node.children().filter(roxmltree::Node::is_element) {
        let c = child.tag_name().name();
        assert!(children.contains(&c), "<{c}> inside <{name}>");
        check_element(child);
    }
}

/// Parses `xml` strictly and checks it against junit-10.xsd's rules; returns the document
/// text of every element (to look for what a reader would show).
pub(crate) fn assert_junit_10(xml: &str) -> String {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    check_element(doc.root_element());
    doc.descendants()
        .filter_map(|n| n.text())
        .chain(
            doc.descendants()
                .flat_map(|n| n.attributes().map(|a| a.value())),
        )
        .collect::<Vec<_>>()
        .join("\n")
}

fn job(dir: &Path, name: &str, rest: &str, script: &str) -> PathBuf {
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: {name}.s.yaml}}\nprompt: do it\n{rest}"
    );
    write_files(
        dir,
        &[
            (&format!("{name}.yaml"), &job),
            (&format!("{name}.s.yaml"), script),
        ],
    );
    dir.join(format!("{name}.yaml"))
}

/// Runs `jobs` with `--out out`, returns (exit code, out/junit.xml's readable text).
fn junit_of(dir: &Path, jobs: &[PathBuf], extra: &[&str]) -> (i32, String, String) {
    let mut cmd = cn_run(dir);
    cmd.args(extra).args(jobs);
    let r = run(cmd, Some(&dir.join("out")));
    let xml = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let text = assert_junit_10(&xml);
    (r.code, xml, text)
}

#[test]
fn a_passing_run_with_checks_keeps_to_junit_10() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "pass",
        "checks: [{name: a, run: 'echo fine'}, {name: b, run: 'true'}]\n",
        "turns:\n  - text: all done\n",
    );
    let (code, xml, text) = junit_of(tmp.path(), &[j], &[]);
    assert_eq!(code, 0, "{xml}");
    assert!(xml.contains("tests=\"3\""), "{xml}");
    assert!(text.contains("all done") && text.contains("fine"), "{text}");
}

#[test]
fn a_failing_retried_run_keeps_to_junit_10() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "fail",
        "checks: [{name: lint, run: 'echo broken; exit 3'}]\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: done\n  - text: done again\n",
    );
    let (code, xml, text) = junit_of(tmp.path(), &[j], &[]);
    assert_eq!(code, 1, "{xml}");
    // One testcase with the final verdict; the first attempt is its rerun.
    assert_eq!(xml.matches("<testcase ").count(), 2, "{xml}");
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert_eq!(xml.matches("<rerunFailure").count(), 1, "{xml}");
    assert!(text.contains("lint failed: exit code 3"), "{text}");
}

#[test]
fn a_run_stopped_by_a_limit_keeps_to_junit_10_with_skipped_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "limit",
        "limits: {max_turns: 1}\nchecks: [{name: tests, run: 'true'}]\n",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
    );
    let (code, xml, _) = junit_of(tmp.path(), &[j], &[]);
    assert_eq!(code, 4, "{xml}");
    assert!(xml.contains("<skipped"), "{xml}");
}

#[test]
fn a_parallel_run_and_its_combined_report_keep_to_junit_10() {
    let tmp = tempfile::tempdir().unwrap();
    let ok = job(tmp.path(), "one", "", "turns:\n  - text: one done\n");
    let bad = job(
        tmp.path(),
        "two",
        "checks: [{name: c, run: 'exit 1'}]\n",
        "turns:\n  - text: two done\n",
    );
    let all = tmp.path().join("all.xml");
    let mut cmd = cn_run(tmp.path());
    cmd.args(["--parallel", "2", "--isolate", "none", "--junit"])
        .arg(&all)
        .args([&ok, &bad]);
    let r = run(cmd, None);
    assert_eq!(r.code, 1, "{r:#?}");
    let text = assert_junit_10(&std::fs::read_to_string(&all).unwrap());
    assert!(
        text.contains("one done") && text.contains("c failed"),
        "{text}"
    );
    // Without --out the combined files go to .cn-run/parallel-<id>/, beside each job's folder.
    let top = std::fs::read_dir(tmp.path().join(".cn-run"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("parallel-")
        })
        .expect("a .cn-run/parallel-<id> folder");
    assert_eq!(
        assert_junit_10(&std::fs::read_to_string(top.join("junit.xml")).unwrap()),
        text
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(top.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["exit_code"], r.code);
}

/// Lines a hostile program prints: each breaks XML or a terminal-code stripper, and is
/// followed by a marker that must survive.
const HOSTILE: &[(&str, &str)] = &[
    ("osc-unterminated", r"\033]0;title never ends"),
    ("dcs-unterminated", r"\033Pq#0;2;0;0;0"),
    ("apc-unterminated", r"\033_G payload"),
    ("csi-unterminated", r"\033[38;5;"),
    ("nonchars", r"\357\277\276\357\277\277"),
    ("c0-controls", r"\001\002\013\014\033\177"),
    ("c1-csi", r"\302\23331m"),
    ("invalid-utf8", r"\377\376"),
    ("pm-sos", r"\033^ private \033X string"),
];

#[test]
fn hostile_check_output_keeps_junit_valid_and_everything_after_each_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let printf: String = HOSTILE
        .iter()
        .map(|(marker, bytes)| format!("printf '{bytes}\\nafter-{marker}\\n'; "))
        .collect();
    let script = "turns:\n  - text: \"answer \\uFFFE\\uFFFF \\e]0;unterminated\\nanswer-tail\"\n";
    let rest = format!(
        "checks: [{{name: \"noisy \\x01\\uFFFF\", run: {printf:?}}}]\n",
        printf = format!("{printf}exit 1")
    );
    let j = job(tmp.path(), "hostile", &rest, script);
    let summary = tmp.path().join("summary.md");
    let mut cmd = cn_run(tmp.path());
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    let xml = std::fs::read_to_string(tmp.path().join("out/junit.xml")).unwrap();
    let text = assert_junit_10(&xml);
    let md = std::fs::read_to_string(&summary).unwrap();
    for (marker, _) in HOSTILE {
        let after = format!("after-{marker}");
        assert!(text.contains(&after), "junit lost {after}:\n{xml}");
        assert!(md.contains(&after), "summary lost {after}:\n{md}");
        assert!(r.stderr.contains(&after), "annotation lost {after}");
    }
    assert!(text.contains("answer-tail"), "{xml}");
    assert!(
        !xml.contains(['\u{fffe}', '\u{ffff}', '\u{1b}', '\u{1}']),
        "{xml:?}"
    );
}

/// A check that fails the first time it runs and passes after: the marker file it leaves
/// in the workspace makes the second run pass.
const FLAKY: &str = "if [ -f .seen-{n} ]; then echo second-pass-{n}; else touch .seen-{n}; echo first-fail-{n}; exit 3; fi";

#[test]
fn a_check_that_failed_then_passed_is_one_passing_case_keeping_its_failed_attempt() {
    for (n, order) in ["flaky first", "flaky last"].iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let flaky = format!(
            "{{name: flaky, run: {:?}}}",
            FLAKY.replace("{n}", &n.to_string())
        );
        let steady = "{name: steady, run: 'echo steady'}";
        let checks = match n {
            0 => format!("[{flaky}, {steady}]"),
            _ => format!("[{steady}, {flaky}]"),
        };
        let j = job(
            tmp.path(),
            "retried",
            &format!("checks: {checks}\nretry: {{max_attempts: 3}}\n"),
            "turns:\n  - text: first\n  - text: fixed it\n",
        );
        let (code, xml, text) = junit_of(tmp.path(), &[j], &[]);
        assert_eq!(code, 0, "{order}: {xml}");
        // What every reader counts: three cases, none failed, the run passed.
        assert_eq!(xml.matches("<testcase ").count(), 3, "{order}: {xml}");
        assert!(!xml.contains("<failure"), "{order}: {xml}");
        assert!(xml.contains("failures=\"0\""), "{order}: {xml}");
        // The failed first attempt is kept, as Surefire keeps a flaky test's.
        assert_eq!(xml.matches("<flakyFailure").count(), 1, "{order}: {xml}");
        let flaky_case = &xml[xml.find("name=\"check: flaky\"").unwrap()..];
        let flaky_case = &flaky_case[..flaky_case.find("</testcase>").unwrap()];
        assert!(
            flaky_case.contains("attempt 1: flaky failed: exit code 3"),
            "{flaky_case}"
        );
        assert!(
            text.contains(&format!("first-fail-{n}")) && text.contains(&format!("second-pass-{n}")),
            "{text}"
        );
    }
}

#[test]
fn no_output_is_in_the_report_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "once",
        "checks: [{name: lint, run: 'echo lint-said-this; exit 2'}, {name: ok, run: 'echo ok-said-this'}]\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: answer-said-this\n  - text: second-answer\n",
    );
    let (code, xml, _) = junit_of(tmp.path(), &[j], &[]);
    assert_eq!(code, 1, "{xml}");
    // The last attempt's output once (in <failure>), the first attempt's once (its rerun).
    assert_eq!(xml.matches("lint-said-this").count(), 2, "{xml}");
    let lint = &xml[xml.find("name=\"check: lint\"").unwrap()..];
    let lint = &lint[..lint.find("</testcase>").unwrap()];
    let failure = &lint[lint.find("<failure").unwrap()..lint.find("</failure>").unwrap()];
    assert_eq!(failure.matches("lint-said-this").count(), 1, "{lint}");
    // Not again in the testcase's own system-out (after its reruns).
    let own = &lint[lint.rfind("</rerunFailure>").unwrap()..];
    assert!(!own.contains("lint-said-this"), "{lint}");
    assert_eq!(xml.matches("ok-said-this").count(), 1, "{xml}");
    assert_eq!(xml.matches("second-answer").count(), 1, "{xml}");
}

#[test]
fn a_job_that_cannot_start_is_a_suite_with_a_failed_agent_run_naming_why() {
    for (n, rest) in [
        "model: {provider: openai, name: gpt-4.1, api_key_env: CN_RUN_TEST_UNSET_KEY}\n",
        "model: {provider: anthropic, name: claude-sonnet-4-5, api_key_env: CN_RUN_TEST_UNSET_KEY}\ncheck: []\n",
        "model: {provider: openai, name: gpt-4.1, api_key_env: OPENAI_API_KEY, headers: {X-Team: '${CN_RUN_TEST_UNSET_KEY}'}}\n",
    ]
    .iter()
    .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        let ok = job(tmp.path(), "ok", "", "turns:\n  - text: ok done\n");
        let rest = rest.replace("check: []\n", "");
        write_files(
            tmp.path(),
            &[(
                "nokey.yaml",
                &format!("version: 1\nname: nokey\n{rest}prompt: do it\n"),
            )],
        );
        let mut cmd = cn_run(tmp.path());
        cmd.env("OPENAI_API_KEY", "sk-test-not-used")
            .args(["--parallel", "2", "--isolate", "none"])
            .arg(&ok)
            .arg(tmp.path().join("nokey.yaml"));
        let r = run(cmd, Some(&tmp.path().join("out")));
        assert_eq!(r.code, 2, "case {n}: {r:#?}");
        let xml = std::fs::read_to_string(tmp.path().join("out/junit.xml")).unwrap();
        let text = assert_junit_10(&xml);
        assert_eq!(xml.matches("<testsuite ").count(), 2, "case {n}: {xml}");
        let suite = &xml[xml.find("<testsuite name=\"nokey\"").expect("a suite for the job")..];
        let suite = &suite[..suite.find("</testsuite>").unwrap()];
        assert!(suite.contains("tests=\"1\"") && suite.contains("failures=\"1\""), "{suite}");
        assert!(suite.contains("<testcase name=\"agent run\""), "{suite}");
        assert!(suite.contains("did not start: "), "{suite}");
        assert!(text.contains("CN_RUN_TEST_UNSET_KEY"), "case {n}: {text}");
        assert!(!xml.contains("sk-test-not-used"), "{xml}");
    }
}

#[test]
fn an_invalid_job_file_is_a_failed_suite_naming_each_problem() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[(
            "broken.yaml",
            "version: 1\nname: broken\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: x\nlimits: {max_turns: lots}\ncolour: red\n",
        )],
    );
    let all = tmp.path().join("all.xml");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("broken.yaml").arg("--junit").arg(&all);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 2, "{r:#?}");
    let xml = std::fs::read_to_string(&all).unwrap();
    let text = assert_junit_10(&xml);
    assert!(xml.contains("<testsuite name=\"broken.yaml\""), "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        text.contains("broken.yaml:5:") && text.contains("colour"),
        "{text}"
    );
    // Nothing ran: --out is left as it was.
    assert!(!tmp.path().join("out").exists());
}
