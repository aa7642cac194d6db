//! junit.xml: one testsuite per job; a testcase for the agent run and one per check (per
//! attempt when retries happened), with times and properties (run id, model, cost,
//! tokens). Written with quick-junit, which strips ANSI and control characters, so agent
//! output full of colour codes still makes well-formed XML.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::RunResult;
use crate::exit_code::Status;
use crate::redact::Redactor;

fn property(name: &str, value: impl ToString) -> Property {
    Property::new(name, value.to_string())
}

fn agent_case(r: &RunResult, redactor: &Redactor) -> TestCase {
    let status = if r.agent_finished {
        TestCaseStatus::success()
    } else {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(redactor.redact(&r.reason).into_owned());
        s.set_type(r.subtype.clone());
        s
    };
    let mut case = TestCase::new("agent run", status);
    case.set_classname(r.job.clone());
    case.set_time(Duration::from_millis(r.duration_ms));
    case.set_system_out(redactor.redact(&r.result).into_owned());
    case.add_property(property("turns", r.num_turns));
    case
}

fn check_cases(r: &RunResult, redactor: &Redactor) -> Vec<TestCase> {
    let retried = r.checks.iter().any(|c| c.attempt > 1);
    let mut cases: Vec<TestCase> = r
        .checks
        .iter()
        .map(|c| {
            let name = if retried {
                format!("check: {} (attempt {})", c.name, c.attempt)
            } else {
                format!("check: {}", c.name)
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
                s.set_message(format!("{} failed: {how}", c.name));
                s.set_type("check_failed");
                s.set_description(redactor.redact(&c.output_tail).into_owned());
                s
            };
            let mut case = TestCase::new(name, status);
            case.set_classname(r.job.clone());
            case.set_time(Duration::from_millis(c.duration_ms));
            case.set_system_out(redactor.redact(&c.output_tail).into_owned());
            case
        })
        .collect();
    // Checks that never ran (the agent did not finish) are reported as skipped.
    for name in &r.checks_declared {
        if !r.checks.iter().any(|c| &c.name == name) {
            let mut s = TestCaseStatus::skipped();
            s.set_message("not run: the agent did not finish");
            let mut case = TestCase::new(format!("check: {name}"), s);
            case.set_classname(r.job.clone());
            cases.push(case);
        }
    }
    cases
}

/// The testsuite of one run; declared checks that never ran are reported as skipped.
pub fn suite(r: &RunResult, redactor: &Redactor) -> TestSuite {
    let mut suite = TestSuite::new(r.job.clone());
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
        suite.set_system_out(redactor.redact(&r.result).into_owned());
    }
    suite
}

/// A report of several runs (one suite each), as XML.
pub fn render(suites: Vec<TestSuite>) -> String {
    let mut report = Report::new("cn-run");
    report.add_test_suites(suites);
    report.to_string().unwrap_or_default()
}
