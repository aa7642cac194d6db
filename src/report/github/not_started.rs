//! A job that did not start (its file invalid, its key unset), in GitHub Actions: an
//! `::error file=JOB,line=L,col=C::` at each place in the job file (GitHub shows it on that
//! line of the file), and its own section of the step summary, so the step's page says
//! which job it was and why, as it does for a job that ran.

use std::fmt::Write as _;

use super::{escape_data, escape_property};
use crate::exit_code::Status;
use crate::job::Problem;
use crate::report::clean::clean;

/// A job that did not start, as the GitHub outputs show it.
pub struct NotStarted<'a> {
    /// Its name, or its file's path when the file did not load.
    pub job: &'a str,
    pub file: Option<&'a str>,
    pub status: Status,
    /// Why, in the words printed on stderr.
    pub message: &'a str,
    /// Each place in the file the failure is at (empty: the file as a whole).
    pub places: Vec<Problem>,
}

/// The `::error` lines: one per place, or one on the file (or the step) as a whole.
pub fn not_started_annotations(n: &NotStarted<'_>) -> String {
    let title = escape_property(&format!("cn-run {}: {}", n.job, n.status.as_str()));
    if n.places.is_empty() {
        let file = n
            .file
            .map(|f| format!("file={},", escape_property(f)))
            .unwrap_or_default();
        return format!("::error {file}title={title}::{}\n", escape_data(n.message));
    }
    let mut out = String::new();
    for p in &n.places {
        // A message that already names its field is not prefixed with it again.
        let what = match p.field.as_str() {
            "" => p.message.clone(),
            field if p.message.starts_with(field) => p.message.clone(),
            field => format!("{field}: {}", p.message),
        };
        let _ = writeln!(
            out,
            "::error file={},line={},col={},title={title}::{}",
            escape_property(&p.file),
            p.line,
            p.column,
            escape_data(&what)
        );
    }
    out
}

/// The job's section of the step summary, at most `budget` bytes: the outcome, and why
/// in a fence no text of the message can close.
pub fn not_started_summary(n: &NotStarted<'_>, budget: usize) -> String {
    let mut md = format!(
        "### ❌ cn-run `{}`: {}\n\nThe job did not start (exit code {}).\n\n",
        n.job.replace('`', "'"),
        n.status.as_str(),
        n.status.exit_code()
    );
    let text = clean(n.message);
    let fence = "`".repeat(longest_backticks(&text).max(2) + 1);
    let mut body = text.as_str();
    let room = budget.saturating_sub(md.len() + 2 * fence.len() + 16);
    if body.len() > room {
        let mut end = room;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body = &body[..end];
    }
    let _ = write!(md, "{fence}text\n{body}\n{fence}\n\n");
    md
}

fn longest_backticks(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(line: usize, field: &str, message: &str) -> Problem {
        Problem {
            file: "jobs/a,b.yaml".to_owned(),
            line,
            column: 3,
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }

    #[test]
    fn each_place_is_an_error_on_its_line_with_the_properties_escaped() {
        let n = NotStarted {
            job: "jobs/a,b.yaml",
            file: Some("jobs/a,b.yaml"),
            status: Status::Invalid,
            message: "two problems",
            places: vec![problem(4, "limits", "50% of\nit"), problem(9, "", "bad")],
        };
        assert_eq!(
            not_started_annotations(&n),
            "::error file=jobs/a%2Cb.yaml,line=4,col=3,title=cn-run jobs/a%2Cb.yaml%3A invalid::limits: 50%25 of%0Ait\n\
             ::error file=jobs/a%2Cb.yaml,line=9,col=3,title=cn-run jobs/a%2Cb.yaml%3A invalid::bad\n"
        );
    }

    #[test]
    fn a_failure_with_no_place_is_one_error_on_the_file() {
        let n = NotStarted {
            job: "fix",
            file: Some("fix.yaml"),
            status: Status::InternalError,
            message: "cannot write",
            places: Vec::new(),
        };
        assert_eq!(
            not_started_annotations(&n),
            "::error file=fix.yaml,title=cn-run fix%3A internal_error::cannot write\n"
        );
    }

    #[test]
    fn the_section_fences_the_message_and_keeps_to_its_budget() {
        let n = NotStarted {
            job: "a`b",
            file: None,
            status: Status::Invalid,
            message: "```\nstill inside",
            places: Vec::new(),
        };
        let md = not_started_summary(&n, 10_000);
        assert!(md.starts_with("### ❌ cn-run `a'b`: invalid\n"), "{md}");
        assert!(md.contains("````text\n```\nstill inside\n````\n"), "{md}");
        let long = "x".repeat(5000);
        let n = NotStarted {
            message: &long,
            ..n
        };
        assert!(not_started_summary(&n, 1000).len() <= 1000);
    }
}
