//! junit.xml: one testsuite per job; a testcase for the agent run and one per check (per
//! attempt when retries happened), with times and suite properties (run id, model, cost,
//! tokens). Every text goes through [`clean`] first (escape sequences end at their line,
//! characters XML 1.0 forbids dropped), and the shape keeps to Jenkins' junit-10.xsd: no
//! `<properties>` in a testcase, no `skipped` on `<testsuites>`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::RunResult;
use super::clean::clean;
use crate::exit_code::Status;
use crate::redact::Redactor;

fn property(name: &str, value: impl ToString) -> Property {
    Property::new(name, clean(&value.to_string()))
}

/// Text a run or a check produced, secrets masked and cleaned for XML.
fn text(redactor: &Redactor, s: &str) -> String {
    clean(&redactor.redact(s))
}

fn agent_case(r: &RunResult, redactor: &Redactor) -> TestCase {
    let status = if r.agent_finished {
        TestCaseStatus::success()
    } else {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(text(redactor, &r.reason));
        s.set_type(r.subtype.clone());
        s
    };
    let mut case = TestCase::new("agent run", status);
    case.set_classname(clean(&r.job));
    case.set_time(Duration::from_millis(r.duration_ms));
    case.set_system_out(text(redactor, &r.result));
    case
}

fn check_cases(r: &RunResult, redactor: &Redactor) -> Vec<TestCase> {
    let retried = r.checks.iter().any(|c| c.attempt > 1);
    let mut cases: Vec<TestCase> = r
        .checks
        .iter()
        .map(|c| {
            let name = if retried {
                format!("check: {} (attempt {})", clean(&c.name), c.attempt)
            } else {
                format!("check: {}", clean(&c.name))
            };
            let status = if c.passed {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let how = match (c.timed_out, c.exit_code) {
                    (true, _) => "timed out".to_owned(),
                    (false, Some(code)) => format!("exit code {code}"),
                    (false, None) => "killed".to_owned(),
                };
                s.set_message(format!("{} failed: {how}", clean(&c.name)));
                s.set_type("check_failed");
                s.set_description(text(redactor, &c.output_tail));
                s
            };
            let mut case = TestCase::new(name, status);
            case.set_classname(clean(&r.job));
            case.set_time(Duration::from_millis(c.duration_ms));
            case.set_system_out(text(redactor, &c.output_tail));
            case
        })
        .collect();
    // Checks that never ran (the agent did not finish) are reported as skipped.
    for name in &r.checks_declared {
        if !r.checks.iter().any(|c| &c.name == name) {
            let mut s = TestCaseStatus::skipped();
            s.set_message("not run: the agent did not finish");
            let mut case = TestCase::new(format!("check: {}", clean(name)), s);
            case.set_classname(clean(&r.job));
            cases.push(case);
        }
    }
    cases
}

/// The testsuite of one run; declared checks that never ran are reported as skipped.
pub fn suite(r: &RunResult, redactor: &Redactor) -> TestSuite {
    let mut suite = TestSuite::new(clean(&r.job));
    suite.set_time(Duration::from_millis(r.duration_ms));
    suite.add_properties([
        property("run_id", &r.run_id),
        property("status", r.status.as_str()),
        property("exit_code", r.exit_code),
        property("provider", &r.provider),
        property("model", &r.model),
        property("turns", r.num_turns),
        property("attempts", r.attempts),
        property("input_tokens", r.usage.input_tokens),
        property("output_tokens", r.usage.output_tokens),
        property(
            "cost_usd",
            r.total_cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.6}")),
        ),
    ]);
    suite.add_test_case(agent_case(r, redactor));
    suite.add_test_cases(check_cases(r, redactor));
    if r.status == Status::Success {
        suite.set_system_out(text(redactor, &r.result));
    }
    suite
}

/// A report of several runs (one suite each), as XML.
pub fn render(suites: Vec<TestSuite>) -> String {
    let mut report = Report::new("cn-run");
    report.add_test_suites(suites);
    without_root_skipped(&report.to_string().unwrap_or_default())
}

/// The XML without the `skipped` attribute quick-junit always puts on `<testsuites>`:
/// Jenkins' junit-10.xsd does not allow it (the count stays on each `<testsuite>`).
fn without_root_skipped(xml: &str) -> String {
    let Some(start) = xml.find("<testsuites ") else {
        return xml.to_owned();
    };
    let end = xml[start..].find('>').map_or(xml.len(), |e| start + e);
    let tag = &xml[start..end];
    let Some(at) = tag.find(" skipped=\"") else {
        return xml.to_owned();
    };
    let close = tag[at + 10..].find('"').map_or(tag.len(), |q| at + 11 + q);
    format!("{}{}{}", &xml[..start + at], &tag[close..], &xml[end..])
}
