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
        "system-out" | "system-err" => (&[], 0, &[]),
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
pub(super) fn assert_junit_10(xml: &str) -> String {
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
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
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
