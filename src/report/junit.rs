//! junit.xml: one testsuite per job; a testcase for the agent run and one per check (per
//! attempt when retries happened), with times and suite properties (run id, model, cost,
//! tokens). Every text goes through [`clean`] first (escape sequences end at their line,
//! characters XML 1.0 forbids dropped), and the shape keeps to Jenkins' junit-10.xsd: no
//! `<properties>` in a testcase, no `skipped` on `<testsuites>`.

use std::time::Duration;

use quick_junit::{
    FlakyOrRerun, NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite,
};

use super::RunResult;
use super::clean::clean;
use crate::checks::CheckResult;
use crate::exit_code::Status;
use crate::redact::Redactor;

fn property(name: &str, value: &(impl ToString + ?Sized)) -> Property {
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

/// How a failed attempt of a check ended, in words.
fn how_it_failed(c: &CheckResult) -> String {
    match (c.timed_out, c.exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "killed".to_owned(),
    }
}

/// The results of each declared check, in order, one list of attempts per check: within
/// an attempt the checks run in their declared order, so the n-th result of an attempt is
/// the n-th check (two checks of one name stay apart).
pub(crate) fn attempts_per_check(r: &RunResult) -> Vec<Vec<&CheckResult>> {
    let mut per_check: Vec<Vec<&CheckResult>> = vec![Vec::new(); r.checks_declared.len()];
    let mut attempt = 0;
    let mut index = 0;
    for c in &r.checks {
        if c.attempt != attempt {
            (attempt, index) = (c.attempt, 0);
        }
        if index == per_check.len() {
            per_check.push(Vec::new());
        }
        per_check[index].push(c);
        index += 1;
    }
    per_check
}

/// An earlier attempt that failed, as Surefire writes a rerun: `flakyFailure` when the
/// check passed in the end, `rerunFailure` when it failed again. Its output goes in the
/// element's `system-out` (readers that only count show none of it).
fn earlier_failure(c: &CheckResult, redactor: &Redactor) -> TestRerun {
    let mut rerun = TestRerun::new(NonSuccessKind::Failure);
    rerun.set_message(format!(
        "attempt {}: {} failed: {}",
        c.attempt,
        clean(&c.name),
        how_it_failed(c)
    ));
    rerun.set_type("check_failed");
    let output = text(redactor, &c.output_tail);
    if !output.is_empty() {
        rerun.set_system_out(output);
    }
    rerun
}

/// One testcase for a check: its verdict is the last attempt it ran in (what the run
/// ended with), its output that attempt's; earlier failed attempts are its reruns and
/// earlier passing ones a line each in `system-err`. A failed check's output is in the
/// `<failure>` text only, never also in `system-out`, so no reader shows it twice.
fn check_case(job: &str, runs: &[&CheckResult], redactor: &Redactor) -> Option<TestCase> {
    let (last, earlier) = runs.split_last()?;
    let mut status = if last.passed {
        TestCaseStatus::success()
    } else {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "{} failed: {}",
            clean(&last.name),
            how_it_failed(last)
        ));
        s.set_type("check_failed");
        s.set_description(text(redactor, &last.output_tail));
        s.set_rerun_kind(FlakyOrRerun::Rerun);
        s
    };
    status.add_reruns(
        earlier
            .iter()
            .filter(|c| !c.passed)
            .map(|c| earlier_failure(c, redactor)),
    );
    let mut case = TestCase::new(format!("check: {}", clean(&last.name)), status);
    case.set_classname(clean(job));
    case.set_time(Duration::from_millis(last.duration_ms));
    if last.passed && !last.output_tail.is_empty() {
        case.set_system_out(text(redactor, &last.output_tail));
    }
    let passed_before: Vec<String> = earlier
        .iter()
        .filter(|c| c.passed)
        .map(|c| format!("attempt {}: passed", c.attempt))
        .collect();
    if !passed_before.is_empty() {
        case.set_system_err(passed_before.join("\n"));
    }
    Some(case)
}

fn check_cases(r: &RunResult, redactor: &Redactor) -> Vec<TestCase> {
    let mut cases = Vec::new();
    for (i, runs) in attempts_per_check(r).iter().enumerate() {
        if let Some(case) = check_case(&r.job, runs, redactor) {
            cases.push(case);
            continue;
        }
        // A declared check that never ran (the agent did not finish) is skipped.
        let name = r.checks_declared.get(i).map_or("", String::as_str);
        let mut s = TestCaseStatus::skipped();
        s.set_message("not run: the agent did not finish");
        let mut case = TestCase::new(format!("check: {}", clean(name)), s);
        case.set_classname(clean(&r.job));
        case.set_time(Duration::ZERO);
        cases.push(case);
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
        property("exit_code", &r.exit_code),
        property("provider", &r.provider),
        property("model", &r.model),
        property("turns", &r.num_turns),
        property("attempts", &r.attempts),
        property("input_tokens", &r.usage.input_tokens),
        property("output_tokens", &r.usage.output_tokens),
        property(
            "cost_usd",
            &r.total_cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.6}")),
        ),
    ]);
    suite.add_test_case(agent_case(r, redactor));
    suite.add_test_cases(check_cases(r, redactor));
    suite
}

/// The testsuite of a job that could not start (an unset key, an invalid file): one
/// failed `agent run` case naming the reason, so every reader counts the job as failed.
pub fn not_started_suite(job: &str, status: Status, reason: &str) -> TestSuite {
    let reason = clean(&crate::redact::redact_output(reason));
    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
    s.set_message(format!("did not start: {}", first_line(&reason)));
    s.set_type(RunResult::subtype_for(status, None));
    s.set_description(reason);
    let mut case = TestCase::new("agent run", s);
    case.set_classname(clean(job));
    case.set_time(Duration::ZERO);
    let mut suite = TestSuite::new(clean(job));
    suite.set_time(Duration::ZERO);
    suite.add_properties([
        property("status", status.as_str()),
        property("exit_code", &status.exit_code()),
    ]);
    suite.add_test_case(case);
    suite
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
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
